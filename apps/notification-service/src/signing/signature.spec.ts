import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { signature, signatureHeaders } from './signature.js';
import { newWebhookSecret, secretKey } from './webhook-secret.js';

const ID = 'msg_p5jmhlxyzxnbe6nsqs3ejjp9tq';
const TIMESTAMP = 1_767_225_600;
const BODY = '{"type":"backup.completed","timestamp":"2026-01-01T00:00:00.000Z","data":{}}';

/** The signature as the Standard Webhooks specification describes it, by hand. */
function expected(key: Buffer, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', key);
  mac.update(Buffer.from(`${id}.${timestamp}.`, 'utf8'));
  mac.update(Buffer.from(body, 'utf8'));
  return `v1,${mac.digest().toString('base64')}`;
}

describe('webhook signatures', () => {
  it('is v1 and the base64 HMAC-SHA256 of id.timestamp.body under the secret’s bytes', () => {
    const key = Buffer.alloc(32, 0x2a);
    const secret = `whsec_${key.toString('base64')}`;
    assert.equal(signature(secret, ID, TIMESTAMP, BODY), expected(key, ID, TIMESTAMP, BODY));
    // The same vector as `openssl dgst -sha256 -mac HMAC -macopt hexkey:2a2a… -binary | base64`
    // computes it, so a change of encoding (hex, base64url, another join) shows.
    assert.equal(
      signature(secret, ID, TIMESTAMP, BODY),
      'v1,t2fo+qNsDXUtdXkSHQ2jIk2XwEHu2HSVhPgiMfoMm04=',
    );
    assert.match(signature(secret, ID, TIMESTAMP, BODY), /^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('signs the exact bytes: another id, time or body is another signature', () => {
    const secret = newWebhookSecret();
    const base = signature(secret, ID, TIMESTAMP, BODY);
    assert.notEqual(signature(secret, `${ID}x`, TIMESTAMP, BODY), base);
    assert.notEqual(signature(secret, ID, TIMESTAMP + 1, BODY), base);
    assert.notEqual(signature(secret, ID, TIMESTAMP, `${BODY} `), base);
    assert.notEqual(signature(newWebhookSecret(), ID, TIMESTAMP, BODY), base);
  });

  it('carries two signatures while a rotation overlaps, the new secret’s first', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const headers = signatureHeaders([current, previous], ID, TIMESTAMP, BODY);
    assert.equal(headers['webhook-id'], ID);
    assert.equal(headers['webhook-timestamp'], String(TIMESTAMP));
    const parts = headers['webhook-signature'].split(' ');
    assert.deepEqual(parts, [
      expected(secretKey(current), ID, TIMESTAMP, BODY),
      expected(secretKey(previous), ID, TIMESTAMP, BODY),
    ]);
    const single = signatureHeaders([current], ID, TIMESTAMP, BODY);
    assert.equal(single['webhook-signature'], parts[0]);
  });

  it('makes secrets of whsec_ and 32 random bytes in base64', () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(secretKey(secret).length, 32);
    assert.notEqual(newWebhookSecret(), secret);
    assert.throws(() => secretKey(randomBytes(32).toString('base64')), /not a webhook/);
  });
});
