import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import type { Message } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { of } from 'rxjs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  answerDueAt,
  assertTimeLeft,
  callTimeoutMs,
  isPastDeadline,
  reserveMs,
  waitWithinDeadline,
} from './deadline.js';
import { ServiceClient } from './service-client.js';

describe('nested deadlines', () => {
  it('leave a call its own timeout when nothing is due', () => {
    assert.equal(callTimeoutMs(5000, undefined, 1_000_000), 5000);
  });

  it("cut a call to what its caller has left, less a tenth for the caller's own work", () => {
    const now = 1_000_000;
    assert.equal(callTimeoutMs(5000, now + 5000, now), 4500);
    assert.equal(callTimeoutMs(5000, now + 2000, now), 1800);
    assert.equal(callTimeoutMs(1000, now + 5000, now), 1000, 'a shorter own timeout stands');
    assert.equal(callTimeoutMs(5000, now + 4000, now, true), 4000, 'the edge keeps nothing');
    assert.ok(callTimeoutMs(5000, now, now) <= 0, 'nothing left: no call');
    assert.ok(callTimeoutMs(5000, now - 50, now) <= 0, 'overdue: no call');
  });

  it('make the answer due a tenth before the caller stops waiting', () => {
    assert.equal(answerDueAt(4500, 1_000_000), 1_000_000 + 4050);
    assert.equal(reserveMs(-10), 0);
  });

  it('end every inner wait before its caller stops waiting, however deep the nesting', () => {
    // A request answered 5 s after it arrived, through four services, each taking 20 ms
    // before it asks the next.
    let now = 0;
    let due = 5000;
    let callerGivesUpAt = due;
    for (let level = 0; level < 4; level++) {
      const waitMs = callTimeoutMs(5000, due, now);
      assert.ok(waitMs > 0, `level ${level} may still ask`);
      const givesUpAt = now + waitMs;
      assert.ok(givesUpAt < due, `level ${level} stops waiting before its own answer is due`);
      assert.ok(givesUpAt < callerGivesUpAt);
      due = answerDueAt(waitMs, now);
      assert.ok(due < givesUpAt, "the service asked answers before its caller's wait ends");
      callerGivesUpAt = givesUpAt;
      now += 20;
    }
  });

  it('refuse to go on once the answer is overdue, with SERVICE_UNAVAILABLE', () => {
    assert.equal(isPastDeadline(undefined, 5), false);
    assert.equal(isPastDeadline(10, 9), false);
    assert.equal(isPastDeadline(10, 10), true);
    assertTimeLeft({ requestId: 'r' }, 5);
    assertTimeLeft({ requestId: 'r', deadline: 10 }, 9);
    assert.throws(
      () => assertTimeLeft({ requestId: 'r', deadline: 10 }, 11),
      (err: unknown) => err instanceof DomainError && err.code === 'SERVICE_UNAVAILABLE',
    );
  });
});

describe('ServiceClient under a deadline', () => {
  function clientRecording(sent: { pattern: string; record: unknown }[]): ServiceClient {
    const proxy = {
      send: (pattern: string, record: unknown) => {
        sent.push({ pattern, record });
        return of({ ok: true });
      },
    } as unknown as ClientProxy;
    return new ServiceClient('test-service', proxy, 5000, 'api-gateway');
  }

  it('sends the answer due time and a broker expiration no longer than the wait', async () => {
    const sent: { pattern: string; record: unknown }[] = [];
    const before = Date.now();
    await clientRecording(sent).send('things.get', { requestId: 'r', deadline: before + 2000 }, {});
    const { data, options } = sent[0]?.record as {
      data: Message<unknown>;
      options: { expiration: string };
    };
    const expiration = Number(options.expiration);
    assert.ok(expiration > 0 && expiration <= 1800, `expiration ${expiration}`);
    assert.ok(data.ctx.deadline !== undefined && data.ctx.deadline < before + 2000);
    assert.equal(data.ctx.requestId, 'r');
  });

  it('gives a message without a deadline one: when its own timeout ends, less a tenth', async () => {
    const sent: { pattern: string; record: unknown }[] = [];
    const before = Date.now();
    await clientRecording(sent).send('things.get', { requestId: 'r' }, {});
    const { data } = sent[0]?.record as { data: Message<unknown> };
    const deadline = data.ctx.deadline ?? 0;
    assert.ok(deadline >= before + 4500 && deadline <= Date.now() + 4500, String(deadline));
  });

  it('asks nothing once no time is left', async () => {
    const sent: { pattern: string; record: unknown }[] = [];
    Logger.overrideLogger(false);
    await assert.rejects(
      clientRecording(sent).send('things.create', { requestId: 'r', deadline: Date.now() - 1 }, {}),
      (err: unknown) => err instanceof DomainError && err.code === 'SERVICE_UNAVAILABLE',
    );
    Logger.overrideLogger(['log', 'error', 'warn']);
    assert.equal(sent.length, 0);
  });
});

describe('waitWithinDeadline', () => {
  it('answers true for work done in time, and waits for it when nothing is due', async () => {
    const ctx = { requestId: 'r', deadline: Date.now() + 5000 };
    assert.equal(await waitWithinDeadline(ctx, sleep(10)), true);
    assert.equal(await waitWithinDeadline({ requestId: 'r' }, sleep(10)), true);
  });

  it('stops waiting, not the work, once the answer is nearly due', async () => {
    let done = false;
    const work = sleep(1000).then(() => (done = true));
    const ctx = { requestId: 'r', deadline: Date.now() + 100 };
    assert.equal(await waitWithinDeadline(ctx, work), false);
    assert.equal(done, false, 'answered before the work ended');
    await work;
    assert.equal(
      await waitWithinDeadline({ requestId: 'r', deadline: Date.now() - 1 }, work),
      false,
    );
  });
});
