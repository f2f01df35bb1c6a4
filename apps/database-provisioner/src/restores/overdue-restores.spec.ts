import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OverdueRestores } from './overdue-restores.js';
import type { RestoreEntity } from './restore.entity.js';
import type { RestoresRepository } from './restores.repository.js';

const MIB = 1024 * 1024;
const NOW = Date.UTC(2026, 10, 28, 12);

function restore(fields: Partial<RestoreEntity>): RestoreEntity {
  return {
    kind: 'backup',
    bytesTotal: 0,
    walFilesTotal: 0,
    walFilesApplied: null,
    downloadSeconds: null,
    replaySeconds: null,
    startedAt: new Date(NOW),
    completedAt: null,
    ...fields,
  } as RestoreEntity;
}

describe('OverdueRestores', () => {
  // One completed backup restore: 100 MiB in 10 s, 5 s of recovery, 20 s in all.
  const history = [
    restore({
      bytesTotal: 100 * MIB,
      downloadSeconds: 10,
      replaySeconds: 5,
      startedAt: new Date(NOW - 3_600_000),
      completedAt: new Date(NOW - 3_600_000 + 20_000),
    }),
  ];
  const overdue = (unfinished: RestoreEntity[]) =>
    new OverdueRestores({
      unfinished: () => Promise.resolve(unfinished),
      estimateHistory: () => Promise.resolve(history),
    } as unknown as RestoresRepository).count(NOW);

  it('counts the restores past three times their estimate, and no other', async () => {
    // 1 GiB at 10 MiB/s, 5 s of recovery and 5 s else: an estimate of 113 s.
    const big = { bytesTotal: 1024 * MIB };
    assert.equal(await overdue([restore({ ...big, startedAt: new Date(NOW - 300_000) })]), 0);
    assert.equal(await overdue([restore({ ...big, startedAt: new Date(NOW - 400_000) })]), 1);
    assert.equal(
      await overdue([
        restore({ ...big, startedAt: new Date(NOW - 400_000) }),
        restore({ startedAt: new Date(NOW - 10_000) }),
      ]),
      1,
    );
    assert.equal(await overdue([]), 0);
  });
});
