import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { Controller, Logger } from '@nestjs/common';
import { DATABASE_PATTERNS, DomainError, parseBrokerUsers } from '@pgcloud/contracts';
import { lastValueFrom, of } from 'rxjs';
import { Handles } from './handles.decorator.js';
import { SenderInterceptor, rpcRefused } from './sender.interceptor.js';

@Controller()
class Handlers {
  /** Sent by the gateway, backup-service and pitr-worker. */
  @Handles(DATABASE_PATTERNS.get)
  get() {
    return 'ran';
  }

  /** A handler nobody declared: left to the validation that follows. */
  undeclared() {
    return 'ran';
  }
}

/** Runs a delivery with this `user-id` through the interceptor; whether the handler ran. */
async function deliver(
  userId: string | undefined,
  users = parseBrokerUsers(''),
  handler: keyof Handlers = 'get',
): Promise<boolean> {
  let ran = false;
  const message = { properties: userId === undefined ? {} : { userId } };
  const context = {
    getHandler: () =>
      Object.getOwnPropertyDescriptor(Handlers.prototype, handler)?.value as unknown,
    switchToRpc: () => ({
      getData: () => ({ ctx: { requestId: 'req-sender' }, payload: {} }),
      getContext: () => ({ getPattern: () => 'databases.get', getMessage: () => message }),
    }),
  } as unknown as ExecutionContext;
  const next: CallHandler = {
    handle: () => {
      ran = true;
      return of('done');
    },
  };
  await lastValueFrom(new SenderInterceptor(users).intercept(context, next));
  return ran;
}

async function refusedCount(sender: string): Promise<number> {
  const { values } = await rpcRefused.get();
  return values.find((v) => v.labels.sender === sender)?.value ?? 0;
}

describe('SenderInterceptor', () => {
  Logger.overrideLogger(false);

  it('lets the apps a pattern names through', async () => {
    for (const app of DATABASE_PATTERNS.get.senders) assert.equal(await deliver(app), true);
  });

  it('refuses another app, an unknown login and a message naming none, and counts each', async () => {
    for (const sender of ['project-service', 'guest', undefined]) {
      const label = sender ?? 'none';
      const before = await refusedCount(label);
      await assert.rejects(deliver(sender), (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.code, 'FORBIDDEN');
        return true;
      });
      assert.equal(await refusedCount(label), before + 1, label);
    }
  });

  it('reads which app a login is from BROKER_USERS', async () => {
    const users = parseBrokerUsers('svc-a=backup-service, svc-b=auth-service');
    assert.equal(await deliver('svc-a', users), true);
    await assert.rejects(deliver('svc-b', users), DomainError);
    // The app's own name is no login once BROKER_USERS names others.
    await assert.rejects(deliver('backup-service', users), DomainError);
  });

  it('leaves a message of no declared pattern to the validation after it', async () => {
    assert.equal(await deliver(undefined, parseBrokerUsers(''), 'undeclared'), true);
  });
});

describe('parseBrokerUsers', () => {
  it("maps each app's own name when empty", () => {
    const users = parseBrokerUsers(' ');
    assert.equal(users.get('pitr-worker'), 'pitr-worker');
    assert.equal(users.get('guest'), undefined);
  });

  it('refuses a pair that is not login=app', () => {
    for (const bad of ['gateway', 'a=b', 'a=api-gateway=x', '=api-gateway', 'a=api-gateway,,'])
      assert.throws(() => parseBrokerUsers(bad), /is not login=app/, bad);
  });
});
