import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RestoreStatus } from '@pgcloud/contracts';
import type { EntityManager } from 'typeorm';
import { docsTable, rowsOf } from '../lifecycle-table.testing.js';
import type { RestoreMove } from './restore-lifecycle.js';
import { RESTORE_MOVES, restoreMayMove } from './restore-lifecycle.js';
import { advanceRestore, moveRestore } from './restores.repository.js';

const PAGE = new URL('../../../../docs/api/restores.md', import.meta.url);

/** Every status a restore has, the type checking that none is left out. */
const RESTORE_STATUSES = Object.keys({
  pending: true,
  running: true,
  completed: true,
  failed: true,
  cancelled: true,
} satisfies Record<RestoreStatus, true>) as RestoreStatus[];

/** A manager that records each update's where and set, and answers `affected`. */
function recordingManager(affected = 1) {
  const updates: { where: Record<string, unknown>; set: Record<string, unknown> }[] = [];
  const manager = {
    update: (_entity: unknown, where: Record<string, unknown>, set: Record<string, unknown>) => {
      updates.push({ where, set });
      return Promise.resolve({ affected });
    },
  } as unknown as EntityManager;
  return { manager, updates };
}

describe("a restore's lifecycle", () => {
  it('moves between known statuses, and ends in one it never leaves', () => {
    const moves = Object.keys(RESTORE_MOVES) as RestoreMove[];
    for (const move of moves) {
      const { from, to } = RESTORE_MOVES[move];
      assert.ok(RESTORE_STATUSES.includes(to), `${move} reaches ${to}`);
      for (const status of from) assert.ok(RESTORE_STATUSES.includes(status));
    }
    const ends: RestoreStatus[] = ['completed', 'failed', 'cancelled'];
    for (const end of ends)
      assert.deepEqual(
        moves.filter((move) => restoreMayMove(end, move)),
        [],
        `${end} is final`,
      );
    // Every status but the first is reached by some move.
    const reached = new Set<RestoreStatus>(moves.map((move) => RESTORE_MOVES[move].to));
    assert.deepEqual(
      RESTORE_STATUSES.filter((status) => !reached.has(status)),
      ['pending'],
    );
  });

  it('is the table docs/api/restores.md shows', () => {
    assert.deepEqual(docsTable(PAGE), rowsOf(RESTORE_MOVES));
  });

  it('writes a move only where the restore is in a status it starts from', async () => {
    const { manager, updates } = recordingManager();
    assert.equal(await moveRestore(manager, 'rstr_1', 'complete', { phase: 'done' }), true);
    assert.equal(updates[0]?.set['status'], 'completed');
    assert.equal(updates[0]?.set['phase'], 'done');
    assert.deepEqual((updates[0]?.where['status'] as { value: unknown }).value, ['running']);
    assert.equal(await moveRestore(recordingManager(0).manager, 'rstr_1', 'start'), false);
  });

  it('refuses a move the table does not hold, before any SQL', async () => {
    const { manager, updates } = recordingManager();
    await assert.rejects(
      moveRestore(manager, 'rstr_1', 'start', {}, ['running']),
      /cannot start from running/,
    );
    assert.deepEqual(updates, []);
  });

  it('writes progress while running, its phase never back', async () => {
    const { manager, updates } = recordingManager();
    await advanceRestore(manager, 'rstr_1', { phase: 'replaying', walFilesDone: 3 });
    const where = updates[0]?.where ?? {};
    assert.equal(where['status'], 'running');
    assert.deepEqual((where['phase'] as { value: unknown }).value, [
      'queued',
      'downloading',
      'replaying',
    ]);
    await advanceRestore(manager, 'rstr_1', { bytesDone: 10 });
    assert.equal(updates[1]?.where['phase'], undefined, 'numbers alone go with any phase');
  });
});
