import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '@pgcloud/contracts';
import { idempotencyKeyOf } from './idempotency-key.js';

/** A request as Node hands it over: every header's values, lowercased names. */
function requestWith(...keys: string[]) {
  return { headersDistinct: keys.length > 0 ? { 'idempotency-key': keys } : {} };
}

function isValidationError(err: unknown): boolean {
  return (
    err instanceof DomainError &&
    err.code === 'VALIDATION_ERROR' &&
    err.details?.[0]?.field === 'Idempotency-Key'
  );
}

describe('idempotencyKeyOf', () => {
  it('has no key when the header is absent', () => {
    assert.equal(idempotencyKeyOf(requestWith()), undefined);
  });

  it('takes 1 to 255 printable ASCII characters, spaces and punctuation included', () => {
    for (const key of [
      'a',
      '9f1c2e4a-7b7d-4f9e-8a55-0c2d9e7b1a33',
      'order 42: retry #1 ~!@"{}[]\\',
      'k'.repeat(255),
    ])
      assert.equal(idempotencyKeyOf(requestWith(key)), key);
  });

  it('refuses an empty, too long or non-ASCII key, control characters, and two keys', () => {
    for (const keys of [
      [''],
      ['k'.repeat(256)],
      ['caf\u00e9'],
      ['tab\there'],
      ['del\x7f'],
      ['a', 'b'],
    ])
      assert.throws(
        () => idempotencyKeyOf(requestWith(...keys)),
        isValidationError,
        keys.join('|'),
      );
  });
});
