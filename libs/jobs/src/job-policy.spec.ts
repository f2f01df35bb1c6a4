import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  abandonedReason,
  defaultBackoff,
  errorReason,
  failureStep,
  PermanentJobError,
} from './job-policy.js';

describe('defaultBackoff', () => {
  it('doubles from one second', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map(defaultBackoff), [1000, 2000, 4000, 8000, 16_000]);
  });

  it('stops at thirty seconds', () => {
    assert.equal(defaultBackoff(6), 30_000);
    assert.equal(defaultBackoff(60), 30_000);
  });

  it('treats a nonsensical attempt as the first', () => {
    assert.equal(defaultBackoff(0), 1000);
  });
});

describe('failureStep', () => {
  it('retries while attempts remain', () => {
    assert.equal(failureStep(new Error('boom'), 1, 3), 'retry');
    assert.equal(failureStep(new Error('boom'), 2, 3), 'retry');
  });

  it('fails on the last attempt', () => {
    assert.equal(failureStep(new Error('boom'), 3, 3), 'fail');
  });

  it('fails a PermanentJobError at once', () => {
    assert.equal(failureStep(new PermanentJobError('bad input'), 1, 5), 'fail');
  });
});

describe('errorReason', () => {
  it('takes the message of an error and the text of anything else', () => {
    assert.equal(errorReason(new Error('disk full')), 'disk full');
    assert.equal(errorReason('plain'), 'plain');
  });

  it('names an empty message', () => {
    assert.equal(errorReason(new Error('')), 'the handler failed without a message');
  });

  it('bounds a long message', () => {
    const reason = errorReason(new Error('x'.repeat(5000)));
    assert.equal(reason.length, 2001);
    assert.ok(reason.endsWith('…'));
  });
});

describe('abandonedReason', () => {
  it('says the attempts ran out and keeps the earlier error', () => {
    assert.match(abandonedReason(3, null), /gave up after 3 attempts/);
    assert.match(abandonedReason(3, 'timeout'), /earlier error: timeout/);
  });
});

describe('PermanentJobError', () => {
  it('is an Error with its own name', () => {
    const error = new PermanentJobError('no such region');
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'PermanentJobError');
  });
});
