import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { ConnectionDetails, Database } from '@pgcloud/contracts';
import { expectData, expectError } from '../support/assertions.js';
import { lsnValue } from '../support/pitr.js';
import { waitForStatus } from '../support/databases.js';
import { markersIn, upTo } from '../support/markers.js';
import { PitrDrill } from '../support/pitr-drill.js';

/**
 * Branches at a point of their source's past (docs/api/databases.md#branches): a PITR
 * restore into the new database, holding what such a restore holds, with the point it was
 * copied at in `parent`.
 */
describe('branches at a point of the past', () => {
  let drill: PitrDrill;
  const databases = () => `/projects/${drill.project.id}/databases`;

  before(async () => {
    drill = await PitrDrill.start();
  });

  /** Branches `drill` at `target`, waits until it runs, and answers it with its markers. */
  async function branchAt(name: string, target: Record<string, string>) {
    const created = expectData<Database>(
      await drill.owner.api.post(databases(), { name, from: { database: 'drill', ...target } }),
      201,
    );
    assert.equal(created.status, 'restoring');
    assert.deepEqual(created.parent, {
      database_id: drill.database.id,
      name: 'drill',
      project_id: drill.project.id,
      lsn: null,
      at: null,
    });
    const branch = await waitForStatus(drill.owner.api, drill.project.id, name, [
      'running',
      'failed',
    ]);
    assert.equal(branch.status, 'running', branch.error);
    const url = expectData<ConnectionDetails>(
      await drill.owner.api.get(`${databases()}/${name}/url`),
      200,
    );
    return { branch, markers: await markersIn(url.connection_string) };
  }

  it('holds at a time, an LSN and a restore point what a PITR restore would', async () => {
    const tenth = drill.markers[9]?.committed.iso ?? '';
    const atTime = await branchAt('at-time', { target_time: tenth });
    assert.deepEqual(atTime.markers, upTo(10));
    assert.deepEqual(atTime.markers, (await drill.restoreCopy(tenth)).markers);
    const copiedAt = Date.parse(atTime.branch.parent?.at ?? '');
    assert.ok(copiedAt <= Date.parse(tenth), 'the last commit replayed, at or before the target');
    assert.ok(copiedAt >= Date.parse(drill.markers[8]?.committed.iso ?? ''));
    assert.match(atTime.branch.parent?.lsn ?? '', /^[0-9A-F]+\/[0-9A-F]+$/);

    const { point, lsn } = await drill.pointAndPosition(31, 'before-branch');
    const atPoint = await branchAt('at-point', { target_restore_point: 'before-branch' });
    assert.deepEqual(atPoint.markers, upTo(31));
    assert.ok(lsnValue(atPoint.branch.parent?.lsn ?? '0/0') >= lsnValue(point.lsn));
    const atLsn = await branchAt('at-lsn', { target_lsn: lsn });
    assert.deepEqual(atLsn.markers, upTo(32));
    assert.ok(lsnValue(atLsn.branch.parent?.lsn ?? '0/0') >= lsnValue(lsn));

    const listed = expectData<{ branches: Database[] }>(
      await drill.owner.api.get(`${drill.path}/branches`),
      200,
    );
    assert.deepEqual(
      listed.branches.map((b) => b.name),
      ['at-time', 'at-point', 'at-lsn'],
    );
  });

  it('refuses a point outside the window, and makes nothing', async () => {
    expectError(
      await drill.owner.api.post(databases(), {
        name: 'too-early',
        from: { database: 'drill', target_time: '2020-01-01T00:00:00Z' },
      }),
      422,
      'TARGET_TIME_INVALID',
    );
    expectError(await drill.owner.api.get(`${databases()}/too-early`), 404, 'DATABASE_NOT_FOUND');
  });
});
