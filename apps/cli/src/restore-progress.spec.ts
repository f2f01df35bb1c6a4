import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Restore } from '@pgcloud/api-client';
import { restoreEnded, restoreProgress } from './restore-progress.js';

const base = { id: 'rstr_x', kind: 'backup', started_at: '2026-01-01T00:00:00.000Z' } as const;

describe('restore progress', () => {
  it('ends at completed, failed and cancelled', () => {
    const ended = (status: string) => restoreEnded({ ...base, status } as Restore);
    assert.deepEqual(['pending', 'running', 'completed', 'failed', 'cancelled'].map(ended), [
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it('shows the status, the phase when the API gives one, and its bytes and ETA', () => {
    assert.deepEqual(restoreProgress({ ...base, status: 'pending' } as Restore), {
      phase: 'pending',
    });
    const running = {
      ...base,
      status: 'running',
      phase: 'downloading',
      progress: { bytes_done: 10, bytes_total: 40, eta_seconds: null },
    } as Restore;
    assert.deepEqual(restoreProgress(running), {
      phase: 'running (downloading)',
      bytesDone: 10,
      bytesTotal: 40,
    });
  });
});
