import assert from 'node:assert/strict';
import type { ApiResponse, ErrorEnvelope, SuccessBody } from '@pgcloud/testing';

/** Asserts a success envelope with that status and returns its data. */
export function expectData<T>(response: ApiResponse<unknown>, status: number): T {
  assert.equal(
    response.status,
    status,
    `expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`,
  );
  const body = response.body as SuccessBody<T>;
  assert.equal(body.success, true);
  assert.ok('data' in body);
  assert.ok(response.headers.get('x-request-id'), 'every answer carries X-Request-Id');
  return body.data;
}

/** Asserts an error envelope with that status and code and returns its error. */
export function expectError(
  response: ApiResponse<unknown>,
  status: number,
  code: string,
): ErrorEnvelope['error'] {
  assert.equal(
    response.status,
    status,
    `expected ${status} ${code}, got ${response.status}: ${JSON.stringify(response.body)}`,
  );
  const body = response.body as ErrorEnvelope;
  assert.equal(body.success, false);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.ok(response.headers.get('x-request-id'), 'every answer carries X-Request-Id');
  return body.error;
}
