import type { RestoreOutcome } from '../drivers/database-driver.js';
import { CorruptArchiveError } from '../drivers/database-driver.js';

/** Kubernetes keeps at most this much of a termination message. */
export const OUTCOME_MAX_BYTES = 4096;

/** A built restore, as one line of JSON. */
export function successLine(outcome: RestoreOutcome): string {
  return `${JSON.stringify({ walFilesApplied: outcome.walFilesApplied, stepSeconds: outcome.stepSeconds })}\n`;
}

/**
 * A failed build, as one line of JSON of at most OUTCOME_MAX_BYTES: the error's message
 * with every secret given in `secrets` replaced (pre-signed links, passwords), cut to fit,
 * and whether the archive is corrupt (retrying cannot help).
 */
export function failureLine(err: unknown, secrets: readonly string[] = []): string {
  let message = err instanceof Error ? err.message : String(err);
  for (const secret of secrets) if (secret.length > 0) message = message.replaceAll(secret, '***');
  const corrupt = err instanceof CorruptArchiveError;
  const line = (text: string) => `${JSON.stringify({ error: text, corrupt })}\n`;
  // Every character takes a byte at least: what is past the limit cannot fit anyway.
  let chars = [...message].slice(0, OUTCOME_MAX_BYTES);
  while (Buffer.byteLength(line(chars.join(''))) > OUTCOME_MAX_BYTES) {
    const over = Buffer.byteLength(line(chars.join(''))) - OUTCOME_MAX_BYTES;
    // Escapes take up to 6 bytes a character: cut at least a sixth of the excess.
    chars = chars.slice(0, Math.max(0, chars.length - Math.max(1, Math.ceil(over / 6)) - 1));
    chars.push('…');
  }
  return line(chars.join(''));
}
