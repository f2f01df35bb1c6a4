/**
 * What the store keeps at a key's slot: the request being answered (with a random claim,
 * telling this gateway's claim from a later one once it expired), or its first answer,
 * sealed (sealed-answer.ts). Both carry the request's fingerprint, so the same key with
 * another request is recognised.
 */
export type IdempotencyRecord =
  | { state: 'pending'; fingerprint: string; claim: string }
  | { state: 'answered'; fingerprint: string; answer: string };

/** The record as the store holds it. */
export function encodeRecord(record: IdempotencyRecord): string {
  return JSON.stringify(record);
}

/** The record a store held; throws when it is not one this gateway wrote. */
export function decodeRecord(text: string): IdempotencyRecord {
  const record = JSON.parse(text) as Partial<Record<string, unknown>>;
  const { state, fingerprint } = record;
  if (typeof fingerprint === 'string') {
    if (state === 'pending' && typeof record['claim'] === 'string')
      return { state, fingerprint, claim: record['claim'] };
    if (state === 'answered' && typeof record['answer'] === 'string')
      return { state, fingerprint, answer: record['answer'] };
  }
  throw new Error('not an idempotency record');
}
