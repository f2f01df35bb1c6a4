import { createHmac } from 'node:crypto';
import { secretKey } from './webhook-secret.js';

/** The headers that sign one attempt (Standard Webhooks, docs/api/webhooks.md#verifying). */
export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** `v1,` and the base64 of HMAC-SHA256 over `id.timestamp.body`, keyed by the secret's bytes. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestamp}.${body}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * The headers of one attempt made at `timestamp` (seconds): signed by each secret given,
 * space-separated, the current one first (two while a rotation overlaps).
 */
export function signatureHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): SignatureHeaders {
  if (secrets.length === 0) throw new Error('an attempt is signed by one secret at least');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signature(secret, id, timestamp, body)).join(' '),
  };
}
