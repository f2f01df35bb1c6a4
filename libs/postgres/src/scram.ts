import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/** Options of a SCRAM-SHA-256 verifier: a fixed salt only for tests and known vectors. */
export interface ScramOptions {
  salt?: Buffer;
  iterations?: number;
}

// PostgreSQL's defaults (SCRAM_DEFAULT_ITERATIONS, SCRAM_DEFAULT_SALT_LEN).
const DEFAULT_ITERATIONS = 4096;
const SALT_BYTES = 16;

/**
 * Computes the verifier PostgreSQL stores for a SCRAM-SHA-256 password,
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, so that
 * `CREATE ROLE ... PASSWORD '<verifier>'` never sends the password itself to the server.
 */
export function scramSha256Verifier(password: string, options: ScramOptions = {}): string {
  const salt = options.salt ?? randomBytes(SALT_BYTES);
  const iterations = options.iterations ?? DEFAULT_ITERATIONS;
  if (!Number.isInteger(iterations) || iterations < 1)
    throw new Error('SCRAM iterations must be a positive integer');
  const saltedPassword = pbkdf2Sync(saslPrep(password), salt, iterations, 32, 'sha256');
  const clientKey = hmac(saltedPassword, 'Client Key');
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = hmac(saltedPassword, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

function hmac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

/**
 * The mapping and normalisation steps of SASLprep (RFC 4013), as PostgreSQL, libpq and
 * node-postgres apply them, so a non-ASCII password hashes the same on every side. The
 * prohibition checks are left out, as they are in node-postgres.
 */
function saslPrep(password: string): string {
  const nonAsciiSpace = /[\u00A0\u1680\u2000-\u200B\u202F\u205F\u3000]/g;
  // Joiners and variation selectors, which combine with their neighbours (RFC 3454 B.1).
  const mappedToNothing = /[\u00AD\u034F\u1806\u180B-\u180D\u200C\u200D\u2060\uFE00-\uFE0F\uFEFF]/g;
  return password.replace(nonAsciiSpace, ' ').replace(mappedToNothing, '').normalize('NFKC');
}
