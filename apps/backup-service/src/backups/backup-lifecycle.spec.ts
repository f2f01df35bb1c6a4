import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BACKUP_STATUSES } from '@pgcloud/contracts';
import type { BackupMove } from './backup-lifecycle.js';
import { BACKUP_MOVES, backupMayMove } from './backup-lifecycle.js';
import type { Transaction } from './backups.repository.js';
import { BackupsRepository } from './backups.repository.js';

const PAGE = new URL('../../../../docs/api/backups.md', import.meta.url);

/** The rows of the table under the page's `## Its life`, backquotes dropped. */
function docsRows(): string[][] {
  const section = readFileSync(PAGE, 'utf8')
    .split(/^## /m)
    .find((part) => part.startsWith('Its life'));
  assert.ok(section, 'docs/api/backups.md has an "Its life" section');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim().replace(/`/g, '')),
    );
}

describe("a backup's lifecycle", () => {
  const moves = Object.keys(BACKUP_MOVES) as BackupMove[];

  it('moves between known statuses; completed and failed are final', () => {
    for (const move of moves) {
      assert.ok(BACKUP_STATUSES.includes(BACKUP_MOVES[move].to), move);
      for (const status of BACKUP_MOVES[move].from) assert.ok(BACKUP_STATUSES.includes(status));
    }
    for (const end of ['completed', 'failed'] as const)
      assert.deepEqual(
        moves.filter((move) => backupMayMove(end, move)),
        [],
      );
  });

  it('is the table docs/api/backups.md shows', () => {
    assert.deepEqual(
      docsRows(),
      moves.map((move) => [move, BACKUP_MOVES[move].from.join(', '), BACKUP_MOVES[move].to]),
    );
  });

  it('refuses a move the table does not hold before any SQL, and makes one it holds', async () => {
    const updates: unknown[][] = [];
    const tx = {
      update: (...args: unknown[]) => {
        updates.push(args);
        return Promise.resolve({ affected: 1 });
      },
    } as unknown as Transaction;
    // move() runs in the caller's transaction: the repository's own DataSource is not used.
    const backups = new BackupsRepository({} as ConstructorParameters<typeof BackupsRepository>[0]);
    await assert.rejects(
      backups.move(tx, 'bkp_1', 'complete', {}, ['pending']),
      /cannot complete from pending/,
    );
    assert.deepEqual(updates, []);
    assert.equal(await backups.move(tx, 'bkp_1', 'fail', { error: 'no' }, ['running']), true);
    assert.deepEqual(updates[0]?.[2], { status: 'failed', error: 'no' });
  });
});
