import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { DomainError } from '@pgcloud/contracts';
import { lastValueFrom, of } from 'rxjs';
import { DeadlineInterceptor } from './deadline.interceptor.js';

/** Runs a message through the interceptor; answers what the handler answered, or throws. */
async function handle(data: unknown): Promise<{ result: unknown; ran: boolean }> {
  let ran = false;
  const context = {
    switchToRpc: () => ({ getData: () => data, getContext: () => ({ getPattern: () => 'x.y' }) }),
  } as unknown as ExecutionContext;
  const next: CallHandler = {
    handle: () => {
      ran = true;
      return of('done');
    },
  };
  const result = await lastValueFrom(new DeadlineInterceptor().intercept(context, next));
  return { result, ran };
}

describe('DeadlineInterceptor', () => {
  it('runs a request whose answer is not due yet, and events, which carry no deadline', async () => {
    const soon = { ctx: { requestId: 'r', deadline: Date.now() + 60_000 }, payload: {} };
    assert.deepEqual(await handle(soon), { result: 'done', ran: true });
    assert.deepEqual(await handle({ event: 'e', payload: {} }), { result: 'done', ran: true });
    assert.deepEqual(await handle({ ctx: { requestId: 'r' } }), { result: 'done', ran: true });
  });

  it('starts nothing once the answer is overdue: SERVICE_UNAVAILABLE', async () => {
    Logger.overrideLogger(false);
    const late = { ctx: { requestId: 'r', deadline: Date.now() - 1 }, payload: {} };
    await assert.rejects(
      handle(late),
      (err: unknown) => err instanceof DomainError && err.code === 'SERVICE_UNAVAILABLE',
    );
    Logger.overrideLogger(['log', 'error', 'warn']);
  });
});
