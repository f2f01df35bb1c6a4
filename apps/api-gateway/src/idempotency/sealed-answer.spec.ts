import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keySlot, openAnswer, sealAnswer } from './sealed-answer.js';

describe('key slots and sealed answers', () => {
  it('give each user their own slot for the same key, and tell neither user nor key', () => {
    const a = keySlot('user_a', 'order-42');
    const b = keySlot('user_b', 'order-42');
    assert.notEqual(a.slot, b.slot);
    assert.notEqual(a.slot, keySlot('user_a', 'order-43').slot);
    assert.equal(
      a.slot,
      keySlot('user_a', 'order-42').slot,
      'the same user and key, the same slot',
    );
    assert.match(a.slot, /^[0-9a-f]{64}$/);
    assert.notEqual(a.secret.toString('hex'), a.slot, 'the secret is not the slot name');
  });

  it('seal an answer so the store holds none of it, and open it with the same key only', () => {
    const answer = { data: { connection_string: 'postgresql://shop:s3cret-pass@host/shop' } };
    const { secret } = keySlot('user_a', 'order-42');
    const sealed = sealAnswer(secret, answer);
    assert.ok(!sealed.includes('s3cret'));
    assert.ok(!Buffer.from(sealed, 'base64').toString('latin1').includes('s3cret'));
    assert.deepEqual(openAnswer(secret, sealed), answer);
    assert.notEqual(sealAnswer(secret, answer), sealed, 'a fresh IV each time');
    assert.throws(() => openAnswer(keySlot('user_a', 'order-43').secret, sealed));
  });

  it('keep a 4xx error as it was answered', () => {
    const { secret } = keySlot('user_a', 'k');
    const answer = {
      error: {
        code: 'PROJECT_NAME_TAKEN' as const,
        message: 'You already have a project named "x".',
      },
    };
    assert.deepEqual(openAnswer(secret, sealAnswer(secret, answer)), answer);
  });
});
