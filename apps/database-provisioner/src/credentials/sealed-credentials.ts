import { randomBytes } from 'node:crypto';
import type { SecretBox } from '@pgcloud/config';
import type { CredentialsEntity } from '../databases/database.entity.js';

/** A database's two passwords, in the clear (never stored, logged or answered so). */
export interface Passwords {
  password: string;
  replicationPassword: string;
}

/** The row and field a sealed password belongs to: a copy into another does not open. */
export interface SealedFor {
  databaseId: string;
  field: 'password' | 'replication_password';
}

/** The associated data a password is sealed with: its row and field. */
export function credentialsSealedFor({ databaseId, field }: SealedFor): string {
  return `pgcloud:credentials:${databaseId}:${field}`;
}

/** The credentials row of a database: each password sealed for that row and field. */
export function sealCredentials(
  box: SecretBox,
  databaseId: string,
  passwords: Passwords,
): CredentialsEntity {
  return {
    databaseId,
    passwordSealed: sealPassword(box, databaseId, passwords.password),
    replicationPasswordSealed: box.seal(
      passwords.replicationPassword,
      credentialsSealedFor({ databaseId, field: 'replication_password' }),
    ),
  };
}

/** The passwords of a credentials row; a value copied from another row does not open. */
export function openCredentials(box: SecretBox, row: CredentialsEntity): Passwords {
  const { databaseId } = row;
  return {
    password: box.open(row.passwordSealed, credentialsSealedFor({ databaseId, field: 'password' })),
    replicationPassword: box.open(
      row.replicationPasswordSealed,
      credentialsSealedFor({ databaseId, field: 'replication_password' }),
    ),
  };
}

/** A new login password, sealed for the database's credentials row. */
export function sealPassword(box: SecretBox, databaseId: string, password: string): string {
  return box.seal(password, credentialsSealedFor({ databaseId, field: 'password' }));
}

/** 32 random bytes in base64url: URL-safe, so the connection string needs no escaping. */
export function newPassword(): string {
  return randomBytes(32).toString('base64url');
}
