import type { DrillOutcome, RestoreOutcome } from '../drivers/database-driver.js';
import { CorruptArchiveError } from '../drivers/database-driver.js';

/** Kubernetes keeps at most this much of a termination message. */
export const OUTCOME_MAX_BYTES = 4096;

/** A built restore, as one line of JSON. */
export function successLine(outcome: RestoreOutcome): string {
  const { walFilesApplied, stepSeconds, copiedPoint } = outcome;
  return `${JSON.stringify({ walFilesApplied, stepSeconds, ...(copiedPoint ? { copiedPoint } : {}) })}\n`;
}

// Each check's detail is cut to this many bytes at first: four of them and the cause fit in a
// termination message, unless escapes swell them (then they are cut shorter).
const DETAIL_MAX_BYTES = 600;

/** A drill's checks, as one line of JSON, each detail without the secrets and cut to fit. */
export function drillLine(outcome: DrillOutcome, secrets: readonly string[] = []): string {
  for (let limit = DETAIL_MAX_BYTES; ; limit = Math.floor(limit / 2)) {
    const cut = (text: string) => cutToBytes(scrubbed(text, secrets), limit);
    const checks = outcome.checks.map((check) => ({ ...check, detail: cut(check.detail) }));
    const cause = outcome.cause ? { cause: cut(outcome.cause) } : {};
    const line = `${JSON.stringify({ ...outcome, checks, ...cause })}\n`;
    if (Buffer.byteLength(line) <= OUTCOME_MAX_BYTES || limit === 0) return line;
  }
}

/** The longest start of `text` of at most `bytes` bytes (UTF-8), whole characters only. */
function cutToBytes(text: string, bytes: number): string {
  let out = '';
  for (const char of text) {
    if (Buffer.byteLength(out + char) > bytes) break;
    out += char;
  }
  return out;
}

function scrubbed(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length > 0) out = out.replaceAll(secret, '***');
  return out;
}

/**
 * A failed build, as one line of JSON of at most OUTCOME_MAX_BYTES: the error's message
 * with every secret given in `secrets` replaced (pre-signed links, passwords), cut to fit,
 * and whether the archive is corrupt (retrying cannot help).
 */
export function failureLine(err: unknown, secrets: readonly string[] = []): string {
  const message = scrubbed(err instanceof Error ? err.message : String(err), secrets);
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
