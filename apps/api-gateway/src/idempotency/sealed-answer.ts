import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { ErrorBody } from '@pgcloud/contracts';

/** The first answer to a key, as kept for replays: the data of a success, or a 4xx error. */
export type StoredAnswer = { data: unknown } | { error: ErrorBody };

/** Where one user's key is kept, and the cipher key its answer is sealed with. */
export interface KeySlot {
  /** A hash of user and key: what the store sees instead of either. */
  slot: string;
  /** Another hash of user and key: only a client that knows the key can unseal its answer. */
  secret: Buffer;
}

/**
 * Derives a key's slot and secret. Keys are per user, so the same key from two users names
 * two slots. The store never holds a key, and answers (which may one day carry connection
 * strings) are sealed with AES-256-GCM under the secret: reading the store tells nothing
 * without the key each answer was asked with.
 */
export function keySlot(userId: string, key: string): KeySlot {
  const digest = (purpose: string) =>
    createHash('sha256')
      .update(JSON.stringify([purpose, userId, key]))
      .digest();
  return {
    slot: digest('pgcloud idempotency slot').toString('hex'),
    secret: digest('pgcloud idempotency answer'),
  };
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** An answer sealed under the secret: base64 of IV, tag and ciphertext. */
export function sealAnswer(secret: Buffer, answer: StoredAnswer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', secret, iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

/** The answer sealed by sealAnswer; throws when the secret or the text is not the one sealed. */
export function openAnswer(secret: Buffer, sealed: string): StoredAnswer {
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', secret, bytes.subarray(0, IV_BYTES));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const text = Buffer.concat([
    decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
  return JSON.parse(text) as StoredAnswer;
}
