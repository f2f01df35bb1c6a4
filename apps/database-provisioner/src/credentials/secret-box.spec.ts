import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SecretBox } from './secret-box.js';

const A = { databaseId: 'db_a', field: 'password' } as const;

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('seals and opens, never showing the plain text', () => {
    const sealed = box.seal('s3cret-password', A);
    assert.ok(sealed.startsWith('v2:'));
    assert.ok(!sealed.includes('s3cret'));
    assert.notEqual(box.seal('s3cret-password', A), sealed, 'a new IV each time');
    assert.equal(box.open(sealed, A), 's3cret-password');
  });

  it('refuses a value copied to another row or field', () => {
    const sealed = box.seal('password', A);
    assert.throws(() => box.open(sealed, { databaseId: 'db_b', field: 'password' }));
    assert.throws(() => box.open(sealed, { databaseId: 'db_a', field: 'replication_password' }));
  });

  it('refuses a tampered value and another key', () => {
    const sealed = box.seal('password', A);
    const parts = sealed.split(':');
    const body = Buffer.from(parts[3] ?? '', 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    const tampered = [...parts.slice(0, 3), body.toString('base64url')].join(':');
    assert.throws(() => box.open(tampered, A));
    assert.throws(() => new SecretBox(randomBytes(32)).open(sealed, A));
    assert.throws(() => new SecretBox(randomBytes(16)));
  });
});
