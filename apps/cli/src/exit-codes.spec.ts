import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, ApiUnreachableError } from '@pgcloud/api-client';
import { CliError, EXIT, exitCodeOf } from './exit-codes.js';

const apiError = (status: number, code: string) => new ApiError(status, code, code, 'req');

describe('exitCodeOf (docs/cli.md)', () => {
  it('maps API errors: 3 auth, 4 not found, 5 conflict or quota, 6 unavailable, 2 validation', () => {
    const cases: [ApiError, number][] = [
      [apiError(401, 'AUTH_REQUIRED'), EXIT.auth],
      [apiError(403, 'ACCESS_DENIED'), EXIT.auth],
      [apiError(404, 'PROJECT_NOT_FOUND'), EXIT.notFound],
      [apiError(409, 'DATABASE_NAME_TAKEN'), EXIT.conflict],
      [apiError(422, 'TARGET_TIME_INVALID'), EXIT.conflict],
      [apiError(403, 'QUOTA_EXCEEDED'), EXIT.conflict],
      [apiError(400, 'VALIDATION_ERROR'), EXIT.usage],
      [apiError(429, 'RATE_LIMIT_EXCEEDED'), EXIT.unavailable],
      [apiError(503, 'SERVICE_UNAVAILABLE'), EXIT.unavailable],
      [apiError(500, 'INTERNAL_ERROR'), EXIT.error],
    ];
    for (const [error, code] of cases) assert.equal(exitCodeOf(error), code, error.code);
  });

  it('exits 6 when the API cannot be reached, and as told for its own errors', () => {
    assert.equal(
      exitCodeOf(new ApiUnreachableError('http://x', { cause: new Error('refused') })),
      EXIT.unavailable,
    );
    assert.equal(exitCodeOf(new CliError(EXIT.notFound, 'X', 'x')), EXIT.notFound);
    assert.equal(exitCodeOf(new Error('anything else')), EXIT.error);
  });
});
