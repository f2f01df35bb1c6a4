import { randomBytes } from 'node:crypto';

/** What every signing secret starts with (Standard Webhooks). */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The key a secret stands for: the bytes after `whsec_`. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('not a webhook signing secret');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/**
 * The associated data an endpoint's secrets are sealed with (libs/config SecretBox): a
 * sealed secret copied to another endpoint's row does not open.
 */
export function secretSealedFor(endpointId: string): string {
  return `pgcloud:webhooks:${endpointId}:secret`;
}
