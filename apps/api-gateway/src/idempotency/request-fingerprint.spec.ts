import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '@pgcloud/contracts';
import { canonicalJson, requestFingerprint } from './request-fingerprint.js';

const request = {
  userId: 'user_a',
  method: 'POST',
  path: '/projects',
  body: { name: 'shop', default_region: 'local' },
};

describe('requestFingerprint', () => {
  it('is the same for the same body, whatever the order of its keys, at every level', () => {
    const reordered = { default_region: 'local', name: 'shop' };
    assert.equal(requestFingerprint(request), requestFingerprint({ ...request, body: reordered }));
    assert.equal(
      canonicalJson({ b: { d: 1, c: [{ f: 2, e: 3 }] }, a: null }),
      '{"a":null,"b":{"c":[{"e":3,"f":2}],"d":1}}',
    );
    assert.equal(requestFingerprint({ ...request, method: 'post' }), requestFingerprint(request));
  });

  it('takes a missing body for an empty one', () => {
    const backup = { ...request, path: '/projects/p/databases/d/backups' };
    assert.equal(
      requestFingerprint({ ...backup, body: undefined }),
      requestFingerprint({ ...backup, body: {} }),
    );
  });

  it('differs with the user, the method, the path, the query or the body', () => {
    const fingerprint = requestFingerprint(request);
    for (const other of [
      { ...request, userId: 'user_b' },
      { ...request, method: 'PUT' },
      { ...request, path: '/projects/x' },
      { ...request, path: '/projects?dry_run=true' },
      { ...request, body: { name: 'shop2', default_region: 'local' } },
      { ...request, body: { name: 'shop' } },
      { ...request, body: [{ name: 'shop', default_region: 'local' }] },
    ])
      assert.notEqual(requestFingerprint(other), fingerprint, JSON.stringify(other));
    // Array order is part of a body.
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
  });

  it('refuses a body nested too deep as VALIDATION_ERROR, not a stack overflow', () => {
    let body: unknown = 'deep';
    for (let i = 0; i < 20_000; i++) body = { a: body };
    assert.throws(
      () => requestFingerprint({ ...request, body }),
      (err: unknown) => err instanceof DomainError && err.code === 'VALIDATION_ERROR',
    );
  });
});
