import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '@pgcloud/api-client';
import { Output } from './output.js';
import { Progress, pollUntil } from './progress.js';

const quiet = () => new Progress(new Output({ quiet: true }), 'work');

describe('pollUntil', () => {
  it('reads until done, and rides out a 429 instead of failing', async () => {
    const answers: (string | ApiError)[] = [
      'pending',
      new ApiError(429, 'RATE_LIMIT_EXCEEDED', 'slow down', undefined),
      'completed',
    ];
    const final = await pollUntil({
      read: () => {
        const next = answers.shift();
        return next instanceof ApiError ? Promise.reject(next) : Promise.resolve(next ?? '');
      },
      done: (status) => status === 'completed',
      state: (status) => ({ phase: status }),
      progress: quiet(),
      intervalMs: 1,
    });
    assert.equal(final, 'completed');
    assert.deepEqual(answers, []);
  });

  it('stops at any other error', async () => {
    const gone = new ApiError(404, 'BACKUP_NOT_FOUND', 'no such backup', undefined);
    await assert.rejects(
      pollUntil({
        read: () => Promise.reject(gone),
        done: () => true,
        state: () => ({ phase: '' }),
        progress: quiet(),
        intervalMs: 1,
      }),
      gone,
    );
  });
});
