import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { Controller, Logger } from '@nestjs/common';
import { DATABASE_PATTERNS, DatabaseRef, DomainError, RequestContext } from '@pgcloud/contracts';
import { lastValueFrom, of } from 'rxjs';
import { Handles, MessageBody, MessageCtx } from './handles.decorator.js';
import { MessageValidationInterceptor } from './message-validation.interceptor.js';

@Controller()
class Handlers {
  @Handles(DATABASE_PATTERNS.get)
  get(@MessageCtx() _ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return body;
  }

  /** A handler nobody declared. */
  undeclared() {
    return 'ran';
  }
}

/** Runs a message through the interceptor to a handler; what it saw, or the error. */
async function handle(
  data: unknown,
  handler: keyof Handlers = 'get',
): Promise<{ ran: boolean; data: unknown }> {
  let ran = false;
  const context = {
    getHandler: () =>
      Object.getOwnPropertyDescriptor(Handlers.prototype, handler)?.value as unknown,
    switchToRpc: () => ({ getData: () => data, getContext: () => ({ getPattern: () => 'x.y' }) }),
  } as unknown as ExecutionContext;
  const next: CallHandler = {
    handle: () => {
      ran = true;
      return of('done');
    },
  };
  await lastValueFrom(new MessageValidationInterceptor().intercept(context, next));
  return { ran, data };
}

async function refused(data: unknown, handler: keyof Handlers = 'get'): Promise<string[]> {
  let fields: string[] = [];
  await assert.rejects(handle(data, handler), (err: unknown) => {
    assert.ok(err instanceof DomainError);
    assert.equal(err.code, 'VALIDATION_ERROR');
    fields = [...new Set((err.details ?? []).map((d) => d.field))];
    return true;
  });
  return fields; // each field once, however many of its rules failed
}

describe('MessageValidationInterceptor', () => {
  const ctx = { requestId: 'req-1', userId: 'user_aaaaaaaaaaaaaaaaaaaa', tier: 'free' };

  it('hands the handler an instance of the declared class', async () => {
    const message = { ctx, payload: { project_id: 'proj_x', name: 'orders' } };
    const { ran } = await handle(message);
    assert.ok(ran);
    assert.ok(message.payload instanceof DatabaseRef);
  });

  it('refuses a wrong, missing or unknown field before the handler runs', async () => {
    Logger.overrideLogger(false);
    try {
      assert.deepEqual(await refused({ ctx, payload: { project_id: 7, name: 'orders' } }), [
        'payload.project_id',
      ]);
      assert.deepEqual(await refused({ ctx, payload: { project_id: 'proj_x' } }), ['payload.name']);
      assert.deepEqual(
        await refused({ ctx, payload: { project_id: 'p', name: 'n', database_id: 'db' } }),
        ['payload.database_id'],
      );
      assert.deepEqual(await refused({ ctx, payload: 'orders' }), ['payload']);
      assert.deepEqual(await refused({ ctx: { userId: 3 }, payload: {} }), [
        'ctx.requestId',
        'ctx.userId',
      ]);
      assert.deepEqual(await refused(null), ['message']);
      assert.deepEqual(await refused({ ctx, payload: {} }, 'undeclared'), ['pattern']);
    } finally {
      Logger.overrideLogger(['log', 'error', 'warn']);
    }
  });
});

describe('Handles', () => {
  it('refuses a handler whose body is not the declared class', () => {
    assert.throws(() => {
      @Controller()
      class Wrong {
        @Handles(DATABASE_PATTERNS.get)
        get(@MessageBody() body: RequestContext) {
          return body;
        }
      }
      return Wrong;
    }, /must be declared as DatabaseRef/);
  });
});
