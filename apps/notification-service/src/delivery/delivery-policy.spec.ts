import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { durationMs } from '@pgcloud/config';
import { loadConfig } from '../config.js';
import {
  disabledReason,
  failureText,
  isDelivered,
  isDueToDisable,
  retryWaitMs,
} from './delivery-policy.js';

const KEY = Buffer.alloc(32, 1).toString('base64');

describe('the retry schedule', () => {
  const schedule = loadConfig({ ENCRYPTION_KEY: KEY }).retryScheduleMs;

  it('is 5 s, 30 s, 2 min, 10 min, 30 min, 2 h, 6 h and 12 h by default', () => {
    assert.deepEqual(
      schedule,
      ['5s', '30s', '2m', '10m', '30m', '2h', '6h', '12h'].map((step) => durationMs(step)),
    );
  });

  it('waits the step of the attempt that failed, then gives up after the last', () => {
    assert.equal(retryWaitMs(schedule, 1), 5_000);
    assert.equal(retryWaitMs(schedule, 2), 30_000);
    assert.equal(retryWaitMs(schedule, 8), 12 * 3_600_000);
    assert.equal(retryWaitMs(schedule, 9), undefined, 'the 9th attempt was the last');
    assert.equal(retryWaitMs(schedule, 0), undefined);
  });

  it('is read from WEBHOOK_RETRY_SCHEDULE, spaces allowed, and refused when malformed', () => {
    const short = loadConfig({ ENCRYPTION_KEY: KEY, WEBHOOK_RETRY_SCHEDULE: '1s, 2s,1m' });
    assert.deepEqual(short.retryScheduleMs, [1000, 2000, 60_000]);
    assert.equal(retryWaitMs(short.retryScheduleMs, 3), 60_000);
    assert.equal(retryWaitMs(short.retryScheduleMs, 4), undefined);
    for (const bad of [',', '5s,', '5', '5s,0s', '1w', '5s;30s'])
      assert.throws(
        () => loadConfig({ ENCRYPTION_KEY: KEY, WEBHOOK_RETRY_SCHEDULE: bad }),
        /WEBHOOK_RETRY_SCHEDULE/,
        bad,
      );
  });
});

describe('an attempt’s outcome', () => {
  it('is delivered by a 2xx answer only', () => {
    for (const statusCode of [200, 201, 204, 299]) assert.ok(isDelivered({ statusCode }));
    for (const statusCode of [100, 301, 304, 400, 404, 500, 503])
      assert.ok(!isDelivered({ statusCode }), String(statusCode));
    assert.ok(!isDelivered({ error: 'connection refused' }));
  });

  it('is told in a few words', () => {
    assert.equal(failureText({ statusCode: 500 }), 'HTTP 500');
    assert.equal(failureText({ error: 'timed out after 10 s' }), 'timed out after 10 s');
    assert.equal(
      failureText({ statusCode: 301, error: 'a redirect, which is not followed' }),
      'HTTP 301: a redirect, which is not followed',
    );
  });
});

describe('disabling an endpoint', () => {
  const since = new Date('2026-01-01T00:00:00Z');
  const threeDays = durationMs('3d');

  it('comes once every attempt failed for WEBHOOK_DISABLE_AFTER', () => {
    assert.ok(!isDueToDisable(since, new Date('2026-01-03T23:59:59Z'), threeDays));
    assert.ok(isDueToDisable(since, new Date('2026-01-04T00:00:00Z'), threeDays));
  });

  it('says for how long and the last failure', () => {
    assert.equal(
      disabledReason('3d', 'connection refused'),
      'every delivery failed for 3 days (last: connection refused)',
    );
    assert.equal(
      disabledReason('1h', 'HTTP 500'),
      'every delivery failed for 1 hour (last: HTTP 500)',
    );
  });
});
