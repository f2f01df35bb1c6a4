import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ArgumentsHost } from '@nestjs/common';
import { Logger, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { DomainError } from '@pgcloud/contracts';
import { HttpErrorFilter } from './http-error.filter.js';

interface Answer {
  status?: number;
  body?: unknown;
  headers: Record<string, string>;
}

function answerTo(exception: unknown): Answer {
  const answer: Answer = { headers: {} };
  const res = {
    setHeader: (name: string, value: string) => (answer.headers[name] = value),
    status(code: number) {
      answer.status = code;
      return this;
    },
    json: (body: unknown) => (answer.body = body),
  };
  const req = { method: 'GET', path: '/somewhere', requestId: 'req-1' };
  const host = {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ArgumentsHost;
  new HttpErrorFilter().catch(exception, host);
  return answer;
}

describe('HttpErrorFilter', () => {
  it('answers a DomainError with its code, status and details', () => {
    const details = [{ field: 'name', message: 'too long' }];
    const answer = answerTo(
      new DomainError('VALIDATION_ERROR', 'The request is not valid.', details),
    );
    assert.equal(answer.status, 400);
    assert.deepEqual(answer.body, {
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'The request is not valid.', details },
    });
  });

  it('asks for a bearer token with AUTH_REQUIRED', () => {
    const answer = answerTo(new DomainError('AUTH_REQUIRED', 'A token is needed.'));
    assert.equal(answer.status, 401);
    assert.equal(answer.headers['WWW-Authenticate'], 'Bearer');
  });

  it("turns Nest's 404 and 413 into NOT_FOUND and PAYLOAD_TOO_LARGE", () => {
    const notFound = answerTo(new NotFoundException());
    assert.equal(notFound.status, 404);
    assert.equal((notFound.body as { error: { code: string } }).error.code, 'NOT_FOUND');
    const tooLarge = answerTo(new PayloadTooLargeException());
    assert.equal(tooLarge.status, 413);
  });

  it('hides anything unexpected behind INTERNAL_ERROR', () => {
    Logger.overrideLogger(false);
    const answer = answerTo(new Error('connect ECONNREFUSED /secret/socket'));
    Logger.overrideLogger(['log', 'error', 'warn']);
    assert.equal(answer.status, 500);
    assert.deepEqual(answer.body, {
      success: false,
      error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred.' },
    });
  });
});
