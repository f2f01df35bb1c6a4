import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CreatedBackup, Database, Project } from '@pgcloud/contracts';
import { eventsExchange } from '@pgcloud/messaging';
import type { ObjectStore } from '@pgcloud/storage';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { eventually, signIn } from '@pgcloud/testing';
import amqp from 'amqplib';
import pg from 'pg';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { runningDatabase, serverDirs, waitUntilClosed } from '../support/databases.js';
import { allSegments, waitForArchive } from '../support/pitr.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

// Cascades travel as events (project.deleted, database.deleted) from the services' outboxes:
// nothing of a deleted project outlives it, however a create races the delete, and an event
// whose publisher dies right after its commit still goes out once it is back.

describe('cascades: events from the outbox', () => {
  let stack: Stack;
  let owner: SignedIn;
  let bucket: ObjectStore;
  let metadata: pg.Client;

  before(async () => {
    stack = await sharedStack();
    owner = await signIn(await newClient(), uniqueLogin('cascade'));
    bucket = stack.bucket();
    metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
  });

  after(async () => {
    bucket.close();
    await metadata.end();
  });

  async function newProject(name: string): Promise<Project> {
    return expectData<Project>(await owner.api.post('/projects', { name }), 201);
  }

  async function count(sql: string, values: unknown[]): Promise<number> {
    const { rows } = await metadata.query<{ n: number }>(sql, values);
    return rows[0]?.n ?? 0;
  }

  /** Waits until nothing of the project is left: records, servers, backups, WAL, objects. */
  async function assertNothingLeftOf(projectId: string, servers: Database[]): Promise<void> {
    await eventually(
      async () => {
        const records = await count(
          'SELECT count(*)::int AS n FROM provisioner.databases WHERE project_id = $1',
          [projectId],
        );
        assert.equal(records, 0, `database records of ${projectId}`);
        const backups = await count(
          'SELECT count(*)::int AS n FROM backups.backups WHERE project_id = $1',
          [projectId],
        );
        assert.equal(backups, 0, `backup records of ${projectId}`);
        const archives = await count(
          'SELECT count(*)::int AS n FROM pitr.archives WHERE project_id = $1',
          [projectId],
        );
        assert.equal(archives, 0, `WAL archives of ${projectId}`);
        const objects = await bucket.list(`projects/${projectId}/`);
        assert.deepEqual(
          objects.map((o) => o.key),
          [],
          `objects of ${projectId}`,
        );
        const dirs = serverDirs(stack.dataDir);
        for (const server of servers)
          assert.ok(!dirs.includes(server.platform_service_id), `${server.name}'s data is gone`);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
  }

  it('removes a project’s databases, backups and WAL when it is force-deleted', async () => {
    const project = await newProject('cascade-full');
    const { database, connection } = await runningDatabase(owner.api, project.id, 'kept');
    const dbPath = `/projects/${project.id}/databases/kept`;
    const backup = expectData<CreatedBackup>(await owner.api.post(`${dbPath}/backups`), 201);
    await waitForBackup(owner.api, `${dbPath}/backups`, backup.id, ['completed']);
    expectData(await owner.api.post(`${dbPath}/pitr/enable`, { retention_days: 7 }), 200);
    await waitForArchive(owner.api, `${dbPath}/pitr`);
    await eventually(async () => {
      const { segments } = await allSegments(owner.api, `${dbPath}/pitr`);
      assert.ok(segments.length > 0, 'a WAL segment is archived');
    });
    assert.ok((await bucket.list(`projects/${project.id}/`)).length > 1);

    expectData(await owner.api.delete(`/projects/${project.id}?force=true`), 200);
    await waitUntilClosed(connection.port, 60_000);
    await assertNothingLeftOf(project.id, [database]);
  });

  it('leaves nothing of a project force-deleted while database creates in it are in flight', async () => {
    const delaysMs = [0, 0, 2, 5, 10, 20, 35, 50, 80, 120, 200, 400];
    const outcomes = { created: 0, refused: 0 };
    for (const [round, delayMs] of delaysMs.entries()) {
      const project = await newProject(`race-${round}`);
      const path = `/projects/${project.id}/databases`;
      // Two creates and the delete race; the delete starts `delayMs` after the creates.
      const creates = [
        owner.api.post(path, { name: 'first' }),
        owner.api.post(path, { name: 'second' }),
      ];
      await sleep(delayMs);
      const deleted = await owner.api.delete(`/projects/${project.id}?force=true`);
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      const made: Database[] = [];
      for (const answer of await Promise.all(creates)) {
        if (answer.status === 201) {
          made.push(expectData<Database>(answer, 201));
          outcomes.created++;
        } else if (answer.status === 404) {
          // The project was gone before the create could commit.
          outcomes.refused++;
        } else {
          // On a loaded machine the gateway may stop waiting (its RPC deadline) before the
          // create answers: whatever the create did is still checked below, by project.
          assert.equal(answer.status, 503, JSON.stringify(answer.body));
        }
      }
      await assertNothingLeftOf(project.id, made);
      // A create after the delete is refused, and leaves nothing either.
      assert.equal((await owner.api.post(path, { name: 'late' })).status, 404);
    }
    // The rounds met both orders: some creates committed before the delete, some after.
    assert.ok(outcomes.created > 0, JSON.stringify(outcomes));
    assert.ok(outcomes.refused > 0, JSON.stringify(outcomes));
  });

  it('publishes an event once after its publisher was killed between the commit and the publish', async () => {
    // A bystander sees every project.deleted of this stack, with its message id.
    const broker = await amqp.connect(stack.env['RABBITMQ_URL'] ?? '');
    const channel = await broker.createChannel();
    const exchange = eventsExchange(stack.env['RMQ_QUEUE_PREFIX'] ?? '');
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, exchange, 'project.deleted');
    const seen: string[] = [];
    await channel.consume(queue, (m) => {
      if (!m) return;
      seen.push(String(m.properties.messageId));
      channel.ack(m);
    });
    // Holding the committed event's row locks the relay out of it (it skips locked rows):
    // killed while we hold it, project-service dies between the commit and the publish.
    const holder = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await holder.connect();
    try {
      let caught: { projectId: string; eventId: string } | undefined;
      for (let attempt = 0; attempt < 30 && !caught; attempt++) {
        const project = await newProject(`killed-${attempt}`);
        await holder.query('BEGIN');
        const deleting = owner.api.delete(`/projects/${project.id}`).catch(() => undefined);
        caught = await holdUnsentEvent(holder, project.id);
        if (!caught) {
          await holder.query('ROLLBACK');
          await deleting;
          continue;
        }
        await stack.stopApp('project-service', 'SIGKILL');
        const { rows } = await holder.query<{ sent_at: Date | null }>(
          'SELECT sent_at FROM projects.outbox WHERE id = $1',
          [caught.eventId],
        );
        assert.equal(rows[0]?.sent_at, null, 'not published before the kill');
        assert.ok(!seen.includes(caught.eventId));
        await holder.query('ROLLBACK');
        await stack.startApp('project-service');
        await deleting;
      }
      assert.ok(caught, 'a kill landed between a commit and its publish');
      const { projectId, eventId } = caught;
      // Out after the restart, and handled by the provisioner, once.
      await eventually(() => assert.ok(seen.includes(eventId), 'published after the restart'));
      await eventually(async () => {
        const handled = await count(
          'SELECT count(*)::int AS n FROM provisioner.inbox WHERE event_id = $1',
          [eventId],
        );
        assert.equal(handled, 1);
      });
      assert.equal(
        await count(
          'SELECT count(*)::int AS n FROM provisioner.deleted_projects WHERE project_id = $1',
          [projectId],
        ),
        1,
      );
      await sleep(2500); // more polls of the relay: nothing goes out again
      assert.equal(seen.filter((id) => id === eventId).length, 1, 'published once');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await broker.close();
      await stack.startApp('project-service'); // a no-op when it runs
    }
  });
});

/**
 * Within `holder`'s open transaction, locks the project's project.deleted row as soon as
 * it is committed, before the relay claims it; undefined when the relay was first.
 */
async function holdUnsentEvent(
  holder: pg.Client,
  projectId: string,
): Promise<{ projectId: string; eventId: string } | undefined> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await holder.query<{ id: string }>(
      `SELECT id FROM projects.outbox
        WHERE event = 'project.deleted' AND payload->>'project_id' = $1 AND sent_at IS NULL
        FOR UPDATE SKIP LOCKED`,
      [projectId],
    );
    if (rows[0]) return { projectId, eventId: rows[0].id };
    const { rows: written } = await holder.query<{ sent: boolean }>(
      `SELECT sent_at IS NOT NULL AS sent FROM projects.outbox
        WHERE event = 'project.deleted' AND payload->>'project_id' = $1`,
      [projectId],
    );
    if (written[0]?.sent) return undefined; // the relay published it first
  }
  return undefined;
}
