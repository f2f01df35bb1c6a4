import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SecretBox, encryptionKeyOf, isEncryptionKey } from './secret-box.js';

const FOR_A = 'pgcloud:test:a';

describe('SecretBox', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key);

  it('seals and opens, never showing the plain text', () => {
    const sealed = box.seal('s3cret-password', FOR_A);
    assert.ok(sealed.startsWith('v2:'));
    assert.ok(!sealed.includes('s3cret'));
    assert.notEqual(box.seal('s3cret-password', FOR_A), sealed, 'a new IV each time');
    assert.equal(box.open(sealed, FOR_A), 's3cret-password');
  });

  it('refuses a value opened for anything else than it was sealed for', () => {
    const sealed = box.seal('password', FOR_A);
    assert.throws(() => box.open(sealed, 'pgcloud:test:b'));
    assert.throws(() => box.open(sealed, ''));
  });

  it('refuses a tampered value and another key', () => {
    const sealed = box.seal('password', FOR_A);
    const parts = sealed.split(':');
    const body = Buffer.from(parts[3] ?? '', 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    const tampered = [...parts.slice(0, 3), body.toString('base64url')].join(':');
    assert.throws(() => box.open(tampered, FOR_A));
    assert.throws(() => new SecretBox(randomBytes(32)).open(sealed, FOR_A));
    assert.throws(() => new SecretBox(randomBytes(16)));
  });

  it('opens a legacy (v1) value, sealed without associated data, only as legacy', () => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update('old', 'utf8'), cipher.final()]);
    const legacy = ['v1', ...[iv, cipher.getAuthTag(), body].map((p) => p.toString('base64url'))];
    const sealed = legacy.join(':');
    assert.ok(SecretBox.isLegacy(sealed));
    assert.equal(box.openLegacy(sealed), 'old');
    assert.throws(() => box.open(sealed, FOR_A), /not a sealed secret/);
    assert.ok(!SecretBox.isLegacy(box.seal('new', FOR_A)));
  });
});

describe('encryption keys', () => {
  it('reads 32 bytes in base64 or base64url', () => {
    const key = randomBytes(32);
    assert.deepEqual(encryptionKeyOf(key.toString('base64')), key);
    assert.deepEqual(encryptionKeyOf(key.toString('base64url')), key);
  });

  it('refuses anything else, naming the setting', () => {
    for (const text of ['', 'short', randomBytes(16).toString('base64'), `${'A'.repeat(44)}=`]) {
      assert.equal(isEncryptionKey(text), false, text);
      assert.throws(() => encryptionKeyOf(text), /ENCRYPTION_KEY must be 32 bytes/);
    }
    assert.equal(isEncryptionKey(undefined), false);
  });
});
