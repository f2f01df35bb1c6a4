import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const KEY_BYTES = 32;
/** Sealed with associated data that names what the value belongs to. */
const VERSION = 'v2';
/** Sealed without associated data (the provisioner's first values); only opened to seal again. */
const LEGACY_VERSION = 'v1';
/** 32 bytes in base64 or base64url, padded or not. */
const KEY_TEXT = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * AES-256-GCM for secrets at rest (database passwords, webhook signing secrets). A sealed
 * value reads `v2:<iv>:<tag>:<ciphertext>` in base64url and is bound, through the cipher's
 * associated data, to what it belongs to (`pgcloud:credentials:<database id>:password`):
 * opened with other associated data, such as another row's, it fails.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error('the encryption key must be 32 bytes');
  }

  seal(plain: string, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join(':');
  }

  /** The plain text of a value sealed with the same associated data; throws otherwise. */
  open(sealed: string, associatedData: string): string {
    return this.decrypt(sealed, VERSION, Buffer.from(associatedData, 'utf8'));
  }

  /** True for a value sealed before values were bound to what they belong to (v1). */
  static isLegacy(sealed: string): boolean {
    return sealed.startsWith(`${LEGACY_VERSION}:`);
  }

  /** Opens a legacy (v1) value: for the migration that seals it again, bound. */
  openLegacy(sealed: string): string {
    return this.decrypt(sealed, LEGACY_VERSION, undefined);
  }

  private decrypt(sealed: string, version: string, aad: Buffer | undefined): string {
    const [found, iv, tag, body] = sealed.split(':');
    if (found !== version || !iv || !tag || body === undefined)
      throw new Error('not a sealed secret');
    const decipher = createDecipheriv(ALGORITHM, this.key, Buffer.from(iv, 'base64url'), {
      authTagLength: 16,
    });
    if (aad) decipher.setAAD(aad);
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }
}

/** True when `text` is an encryption key as settings give it: 32 bytes, base64 or base64url. */
export function isEncryptionKey(text: unknown): text is string {
  return typeof text === 'string' && KEY_TEXT.test(text);
}

/** The 32 bytes of an encryption key setting; throws, naming the setting, on anything else. */
export function encryptionKeyOf(text: string, setting = 'ENCRYPTION_KEY'): Buffer {
  if (!isEncryptionKey(text))
    throw new Error(`${setting} must be 32 bytes, base64-encoded (openssl rand -base64 32)`);
  return Buffer.from(text, 'base64');
}
