import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
/** Sealed with its row as associated data. */
const VERSION = 'v2';
/** Sealed without associated data (before v2); only the re-seal migration opens it. */
const LEGACY_VERSION = 'v1';

/** The row and field a sealed value belongs to: a copy into another does not open. */
export interface SealedFor {
  databaseId: string;
  field: 'password' | 'replication_password';
}

/**
 * AES-256-GCM for secrets at rest (database passwords). A sealed value reads
 * `v2:<iv>:<tag>:<ciphertext>` in base64url and is bound to its row and field through the
 * cipher's associated data: moved to another database's row, it fails to open.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the encryption key must be 32 bytes');
  }

  seal(plain: string, sealedFor: SealedFor): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv);
    cipher.setAAD(associatedData(sealedFor));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join(':');
  }

  open(sealed: string, sealedFor: SealedFor): string {
    return this.decrypt(sealed, VERSION, associatedData(sealedFor));
  }

  /** True for a value sealed before values were bound to their rows. */
  static isLegacy(sealed: string): boolean {
    return sealed.startsWith(`${LEGACY_VERSION}:`);
  }

  /** Opens a legacy (v1) value: for the migration that seals it again, bound to its row. */
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

function associatedData({ databaseId, field }: SealedFor): Buffer {
  return Buffer.from(`pgcloud:credentials:${databaseId}:${field}`, 'utf8');
}
