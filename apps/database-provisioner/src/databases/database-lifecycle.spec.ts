import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EntityManager } from 'typeorm';
import { docsTable, rowsOf } from '../lifecycle-table.testing.js';
import type { DatabaseMove } from './database-lifecycle.js';
import { DATABASE_MOVES, databaseMayMove } from './database-lifecycle.js';
import { moveDatabase, removeDatabases } from './databases.repository.js';
import type { DatabaseRecordStatus } from './database.entity.js';

const PAGE = new URL('../../../../docs/api/databases.md', import.meta.url);

/** Every status a database record has, the type checking that none is left out. */
const STATUSES = Object.keys({
  provisioning: true,
  running: true,
  restoring: true,
  resizing: true,
  failed: true,
  deleting: true,
} satisfies Record<DatabaseRecordStatus, true>) as DatabaseRecordStatus[];

describe("a database's lifecycle", () => {
  const moves = Object.keys(DATABASE_MOVES) as DatabaseMove[];

  it('moves between known statuses; deleting is final, and every other status may delete', () => {
    for (const move of moves) {
      assert.ok(STATUSES.includes(DATABASE_MOVES[move].to), move);
      for (const status of DATABASE_MOVES[move].from) assert.ok(STATUSES.includes(status));
    }
    assert.deepEqual(
      moves.filter((move) => databaseMayMove('deleting', move)),
      [],
    );
    for (const status of STATUSES.filter((s) => s !== 'deleting'))
      assert.ok(databaseMayMove(status, 'remove'), `${status} may be deleted`);
    // `provisioning` is where a database begins: no move leads back to it.
    const reached: readonly DatabaseRecordStatus[] = moves.map((move) => DATABASE_MOVES[move].to);
    assert.ok(!reached.includes('provisioning'));
  });

  it('is the table docs/api/databases.md shows', () => {
    assert.deepEqual(docsTable(PAGE), rowsOf(DATABASE_MOVES));
  });

  it('writes a move only where the database is in a status it starts from', async () => {
    const updates: { where: Record<string, unknown>; set: Record<string, unknown> }[] = [];
    const manager = {
      update: (_: unknown, where: Record<string, unknown>, set: Record<string, unknown>) => {
        updates.push({ where, set });
        return Promise.resolve({ affected: 0 });
      },
    } as unknown as EntityManager;
    assert.equal(await moveDatabase(manager, 'db_1', 'lost', { error: 'gone' }), false);
    assert.deepEqual(updates[0]?.set, { status: 'failed', error: 'gone' });
    assert.deepEqual((updates[0]?.where['status'] as { value: unknown }).value, [
      'running',
      'restoring',
    ]);
  });

  it('removes in one statement, from the statuses the table allows', async () => {
    const calls: unknown[][] = [];
    const manager = {
      query: (sql: string, values: unknown[]) => {
        calls.push([sql, values]);
        return Promise.resolve([{ id: 'db_1', project_id: 'proj_1' }]);
      },
    } as unknown as EntityManager;
    assert.deepEqual(await removeDatabases(manager, ['db_1']), [
      { id: 'db_1', project_id: 'proj_1' },
    ]);
    assert.deepEqual(calls[0]?.[1], [['db_1'], [...DATABASE_MOVES.remove.from]]);
  });
});
