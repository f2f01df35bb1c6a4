import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ArgumentsHost } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import {
  BadRequestException,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import { DomainError } from '@pgcloud/contracts';
import type { WireError } from '@pgcloud/contracts';
import { HttpErrorFilter } from './http-error.filter.js';

interface Answer {
  status?: number;
  body?: unknown;
  headers: Record<string, string>;
}

function answerTo(exception: unknown): Answer {
  const answer: Answer = { headers: {} };
  const res = { the: 'response' };
  // Nest's HTTP adapter, as the filter uses it: headers, then the body with its status.
  const httpAdapter = {
    setHeader(target: unknown, name: string, value: string) {
      assert.equal(target, res);
      answer.headers[name] = value;
    },
    reply(target: unknown, body: unknown, status: number) {
      assert.equal(target, res);
      answer.status = status;
      answer.body = body;
    },
  };
  const req = { method: 'GET', url: '/somewhere?x=1', requestId: 'req-1' };
  const host = {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ArgumentsHost;
  new HttpErrorFilter({ httpAdapter } as unknown as HttpAdapterHost).catch(exception, host);
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

  it('says a path it cannot decode is the path, not the body', () => {
    // What Express throws for GET /databases/% (decode_param), as Nest hands it on.
    const decoding = Object.assign(new URIError("Failed to decode param '%'"), { status: 400 });
    const answer = answerTo(
      new BadRequestException("Failed to decode param '%'", { cause: decoding }),
    );
    assert.equal(answer.status, 400);
    const error = (answer.body as { error: WireError }).error;
    assert.equal(error.code, 'VALIDATION_ERROR');
    assert.deepEqual(error.details, [
      { field: 'path', message: 'must be valid percent-encoded UTF-8' },
    ]);
  });

  it('asks for a bearer token with AUTH_REQUIRED', () => {
    const answer = answerTo(new DomainError('AUTH_REQUIRED', 'A token is needed.'));
    assert.equal(answer.status, 401);
    assert.equal(answer.headers['WWW-Authenticate'], 'Bearer');
  });

  it('answers when to ask again as Retry-After, outside the envelope, also after the wire', () => {
    const sent = DomainError.retryLater('COOLDOWN_ACTIVE', 'Not yet.', 12.2);
    const answer = answerTo(
      DomainError.fromWire(JSON.parse(JSON.stringify(sent.toWire())) as WireError),
    );
    assert.equal(answer.status, 409);
    assert.equal(answer.headers['Retry-After'], '13');
    assert.deepEqual(answer.body, {
      success: false,
      error: { code: 'COOLDOWN_ACTIVE', message: 'Not yet.' },
    });
  });

  it("turns Nest's 404 and 413 into NOT_FOUND and PAYLOAD_TOO_LARGE", () => {
    const notFound = answerTo(new NotFoundException());
    assert.equal(notFound.status, 404);
    assert.deepEqual((notFound.body as { error: unknown }).error, {
      code: 'NOT_FOUND',
      message: 'There is no route GET /somewhere.',
    });
    const tooLarge = answerTo(new PayloadTooLargeException());
    assert.equal(tooLarge.status, 413);
  });

  it("turns the HTTP server's own refusals (a statusCode on an Error) into their codes", () => {
    const serverError = (statusCode: number) => Object.assign(new Error('refused'), { statusCode });
    const codeOf = (answer: Answer) => (answer.body as { error: { code: string } }).error.code;
    assert.equal(codeOf(answerTo(serverError(413))), 'PAYLOAD_TOO_LARGE');
    assert.equal(codeOf(answerTo(serverError(400))), 'VALIDATION_ERROR');
    assert.equal(codeOf(answerTo(serverError(415))), 'VALIDATION_ERROR');
    assert.equal(codeOf(answerTo(serverError(404))), 'NOT_FOUND');
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
