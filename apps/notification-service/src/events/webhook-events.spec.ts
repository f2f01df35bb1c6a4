import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventDef, WebhookEventType } from '@pgcloud/contracts';
import {
  BACKUP_EVENTS,
  DATABASE_EVENTS,
  DRILL_EVENTS,
  PITR_EVENTS,
  RESTORE_EVENTS,
  WEBHOOK_EVENT_TYPES,
} from '@pgcloud/contracts';
import type { WebhookEvent } from './webhook-events.js';
import { WEBHOOK_SOURCES, webhookBody } from './webhook-events.js';

const IDS = { project_id: 'proj_aaaaaaaaaaaaaaaaaaaa', database_id: 'db_bbbbbbbbbbbbbbbbbbbb' };

/** The webhook event a domain event makes, through the sources this service listens with. */
function mapped(def: EventDef<object>, payload: object): WebhookEvent | undefined {
  const source = WEBHOOK_SOURCES.find((candidate) => candidate.def === def);
  assert.ok(source, `${def.name} is listened to`);
  return source.toWebhook(payload);
}

function typeOf(def: EventDef<object>, payload: object): string | undefined {
  return mapped(def, payload)?.type;
}

describe('webhook events from domain events', () => {
  it('makes database.running and database.failed of those statuses only', () => {
    const of = (status: string, error?: string) =>
      mapped(DATABASE_EVENTS.statusChanged, { ...IDS, status, ...(error ? { error } : {}) });
    assert.deepEqual(of('running'), {
      type: 'database.running',
      projectId: IDS.project_id,
      databaseId: IDS.database_id,
      data: { ...IDS, status: 'running' },
    });
    assert.deepEqual(
      of('failed', 'postgres://u:secret@host failed')?.data,
      {
        ...IDS,
        status: 'failed',
      },
      'no free text: an error may quote anything',
    );
    assert.equal(of('provisioning'), undefined);
    assert.equal(of('restoring'), undefined);
  });

  it('names the database events that have one type each as they are', () => {
    assert.equal(typeOf(DATABASE_EVENTS.expired, IDS), 'database.expired');
    assert.equal(typeOf(DATABASE_EVENTS.credentialsRotated, IDS), 'database.credentials_rotated');
    assert.deepEqual(
      mapped(DATABASE_EVENTS.storageFenced, { ...IDS, used_bytes: 11, limit_bytes: 10 })?.data,
      { ...IDS, used_bytes: 11, limit_bytes: 10 },
    );
  });

  it('makes backup.completed and backup.failed, and nothing of a running backup', () => {
    const of = (status: string) =>
      mapped(BACKUP_EVENTS.statusChanged, { ...IDS, backup_id: 'bkp_1', status, error: 'x' });
    assert.deepEqual(of('completed')?.data, { ...IDS, backup_id: 'bkp_1', status: 'completed' });
    assert.equal(of('failed')?.type, 'backup.failed');
    assert.equal(of('pending'), undefined);
    assert.equal(of('running'), undefined);
  });

  it('makes restore.completed, failed or cancelled by how the restore ended', () => {
    for (const status of ['completed', 'failed', 'cancelled'])
      assert.deepEqual(
        mapped(RESTORE_EVENTS.finished, { ...IDS, restore_id: 'rstr_1', in_place: true, status }),
        {
          type: `restore.${status}`,
          projectId: IDS.project_id,
          databaseId: IDS.database_id,
          data: { ...IDS, restore_id: 'rstr_1', in_place: true, status },
        },
      );
  });

  it('makes drill and archive events with their state, without details', () => {
    const drill = {
      ...IDS,
      drill_id: 'drl_1',
      status: 'failed',
      backup_id: 'bkp_1',
      checks: [{ name: 'consistent', passed: false, detail: 'the object was changed' }],
      error: 'a check failed',
    };
    assert.deepEqual(mapped(DRILL_EVENTS.failed, drill), {
      type: 'drill.failed',
      projectId: IDS.project_id,
      databaseId: IDS.database_id,
      data: {
        ...IDS,
        drill_id: 'drl_1',
        status: 'failed',
        backup_id: 'bkp_1',
        checks: [{ name: 'consistent', passed: false }],
      },
    });
    assert.equal(typeOf(DRILL_EVENTS.passed, { ...drill, status: 'passed' }), 'drill.passed');
    for (const [def, state] of [
      [PITR_EVENTS.archiveStale, 'stale'],
      [PITR_EVENTS.archiveBroken, 'broken'],
      [PITR_EVENTS.archiveHealthy, 'healthy'],
    ] as const)
      assert.deepEqual(mapped(def, { ...IDS, state, problem: 'segment 0000… missing' }), {
        type: `archive.${state}`,
        projectId: IDS.project_id,
        databaseId: IDS.database_id,
        data: { ...IDS, state },
      });
  });

  it('covers every webhook event type', () => {
    const made = new Set<WebhookEventType>();
    const samples: [EventDef<object>, object][] = [
      [DATABASE_EVENTS.statusChanged, { ...IDS, status: 'running' }],
      [DATABASE_EVENTS.statusChanged, { ...IDS, status: 'failed' }],
      [DATABASE_EVENTS.expired, IDS],
      [DATABASE_EVENTS.storageFenced, { ...IDS, used_bytes: 1, limit_bytes: 1 }],
      [DATABASE_EVENTS.credentialsRotated, IDS],
      ...['completed', 'failed'].map((status): [EventDef<object>, object] => [
        BACKUP_EVENTS.statusChanged,
        { ...IDS, backup_id: 'b', status },
      ]),
      ...['completed', 'failed', 'cancelled'].map((status): [EventDef<object>, object] => [
        RESTORE_EVENTS.finished,
        { ...IDS, restore_id: 'r', in_place: false, status },
      ]),
      [DRILL_EVENTS.passed, { ...IDS, drill_id: 'd', status: 'passed', checks: [] }],
      [DRILL_EVENTS.failed, { ...IDS, drill_id: 'd', status: 'failed', checks: [] }],
      [PITR_EVENTS.archiveStale, { ...IDS, state: 'stale' }],
      [PITR_EVENTS.archiveBroken, { ...IDS, state: 'broken' }],
      [PITR_EVENTS.archiveHealthy, { ...IDS, state: 'healthy' }],
    ];
    for (const [def, payload] of samples) {
      const type = mapped(def, payload)?.type;
      if (type) made.add(type);
    }
    assert.deepEqual([...made].sort(), [...WEBHOOK_EVENT_TYPES].sort());
  });

  it('sends {type, timestamp, data} with the time as ISO', () => {
    const event = mapped(DATABASE_EVENTS.expired, IDS);
    assert.ok(event);
    const body = webhookBody(event, new Date('2026-01-02T03:04:05.678Z'));
    assert.equal(
      body,
      `{"type":"database.expired","timestamp":"2026-01-02T03:04:05.678Z","data":${JSON.stringify(IDS)}}`,
    );
  });
});
