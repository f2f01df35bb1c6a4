import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PastRestore } from './restore-estimate.js';
import { FIRST_GUESS, estimateSeconds } from './restore-estimate.js';

const MB = 1024 * 1024;

describe('restore estimates', () => {
  it('starts from a first guess before anything was restored', () => {
    const seconds = estimateSeconds([], { kind: 'pitr', bytes: 100 * MB, walFiles: 8 });
    assert.equal(
      seconds,
      Math.ceil(2 + 8 / FIRST_GUESS.segmentsPerSecond + FIRST_GUESS.otherSeconds),
    );
  });

  it("learns this deployment's rates: download, replay, and the rest", () => {
    const history: PastRestore[] = [
      // 100 MB in 2 s, recovery 1 s, 3 s more: 6 s in all.
      {
        kind: 'backup',
        bytesTotal: 100 * MB,
        walFilesApplied: null,
        downloadSeconds: 2,
        replaySeconds: 1,
        totalSeconds: 6,
      },
      // 100 MB in 2 s, 20 segments in 4 s, 3 s more.
      {
        kind: 'pitr',
        bytesTotal: 100 * MB,
        walFilesApplied: 20,
        downloadSeconds: 2,
        replaySeconds: 4,
        totalSeconds: 9,
      },
    ];
    // 50 MB/s measured: 300 MB is 6 s; 10 segments at 5/s is 2 s; 3 s more.
    assert.equal(estimateSeconds(history, { kind: 'pitr', bytes: 300 * MB, walFiles: 10 }), 11);
    // A backup's own recovery: the median of the backup restores' (1 s).
    assert.equal(estimateSeconds(history, { kind: 'backup', bytes: 300 * MB, walFiles: 0 }), 10);
  });
});
