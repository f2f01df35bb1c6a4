import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('seals and opens, never showing the plain text', () => {
    const sealed = box.seal('s3cret-password');
    assert.ok(!sealed.includes('s3cret'));
    assert.notEqual(box.seal('s3cret-password'), sealed, 'a new IV each time');
    assert.equal(box.open(sealed), 's3cret-password');
  });

  it('refuses a tampered value and another key', () => {
    const sealed = box.seal('password');
    const parts = sealed.split(':');
    const body = Buffer.from(parts[3] ?? '', 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    assert.throws(() => box.open([...parts.slice(0, 3), body.toString('base64url')].join(':')));
    assert.throws(() => new SecretBox(randomBytes(32)).open(sealed));
    assert.throws(() => new SecretBox(randomBytes(16)));
  });
});
