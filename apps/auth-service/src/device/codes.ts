import { createHash, randomBytes, randomInt } from 'node:crypto';

/** Letters of user codes: no vowels (no words) and no look-alikes (RFC 8628 section 6.1). */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_BODY_LENGTH = 40;

/** 32 random bytes, base64url: what the client polls with. */
export function generateDeviceCode(): string {
  return randomBytes(32).toString('base64url');
}

/** 8 letters of USER_CODE_ALPHABET, stored without the dash. */
export function generateUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++)
    code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** `XXXX-XXXX`, as people read it. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** The stored form of what a person typed, or null when it cannot be a user code. */
export function normalizeUserCode(input: string): string | null {
  const code = input.replace(/[\s-]/g, '').toUpperCase();
  const valid =
    code.length === USER_CODE_LENGTH && [...code].every((c) => USER_CODE_ALPHABET.includes(c));
  return valid ? code : null;
}

/** `pgc_` and 40 base62 characters, without modulo bias. */
export function generateAccessToken(): string {
  let body = '';
  while (body.length < TOKEN_BODY_LENGTH) {
    for (const byte of randomBytes(TOKEN_BODY_LENGTH)) {
      if (byte < 248 && body.length < TOKEN_BODY_LENGTH) body += BASE62[byte % 62];
    }
  }
  return `pgc_${body}`;
}

/** True when the value has the shape of an access token. */
export function looksLikeAccessToken(value: string): boolean {
  return /^pgc_[0-9A-Za-z]{40}$/.test(value);
}

/** Hex SHA-256: how device codes and tokens are kept. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
