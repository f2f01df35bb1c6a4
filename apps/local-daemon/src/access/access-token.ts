import { createHash, timingSafeEqual } from 'node:crypto';

/** The daemon's bearer token, compared in constant time. */
export class AccessToken {
  private readonly digest: Buffer;

  constructor(token: string) {
    this.digest = sha256(token);
  }

  /**
   * True when `authorization` is `Bearer <the token>`. Digests of equal length are
   * compared, so the time taken tells nothing about the token or its length.
   */
  accepts(authorization: string | undefined): boolean {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    return match?.[1] !== undefined && timingSafeEqual(sha256(match[1]), this.digest);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
