import type { IncomingMessage } from 'node:http';
import { DomainError } from '@pgcloud/contracts';

/**
 * The header that names a creating POST, so it can be sent again safely (docs/api/idempotency.md).
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The header of an answer that repeats the first answer to the same key. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

// 1-255 printable ASCII characters, space included. Node has already trimmed the spaces
// around a header value, and reads bytes past ASCII as Latin-1 characters, refused here.
const WELL_FORMED = /^[\x20-\x7e]{1,255}$/;

/**
 * The request's Idempotency-Key, or undefined when it has none. A key that is empty, too
 * long, not printable ASCII, or given twice (Node would join two into one "a, b" that looks
 * well-formed) is VALIDATION_ERROR.
 */
export function idempotencyKeyOf(
  req: Pick<IncomingMessage, 'headersDistinct'>,
): string | undefined {
  const given = req.headersDistinct[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
  if (given === undefined) return undefined;
  const [key] = given;
  if (given.length === 1 && key !== undefined && WELL_FORMED.test(key)) return key;
  throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
    {
      field: IDEMPOTENCY_KEY_HEADER,
      message: 'must be given once, as 1 to 255 printable ASCII characters',
    },
  ]);
}
