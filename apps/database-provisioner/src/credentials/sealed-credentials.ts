import type { CredentialsEntity } from '../databases/database.entity.js';
import type { SecretBox } from './secret-box.js';

/** A database's two passwords, in the clear (never stored, logged or answered so). */
export interface Passwords {
  password: string;
  replicationPassword: string;
}

/** The credentials row of a database: each password sealed for that row and field. */
export function sealCredentials(
  box: SecretBox,
  databaseId: string,
  passwords: Passwords,
): CredentialsEntity {
  return {
    databaseId,
    passwordSealed: box.seal(passwords.password, { databaseId, field: 'password' }),
    replicationPasswordSealed: box.seal(passwords.replicationPassword, {
      databaseId,
      field: 'replication_password',
    }),
  };
}

/** The passwords of a credentials row; a value copied from another row does not open. */
export function openCredentials(box: SecretBox, row: CredentialsEntity): Passwords {
  const { databaseId } = row;
  return {
    password: box.open(row.passwordSealed, { databaseId, field: 'password' }),
    replicationPassword: box.open(row.replicationPasswordSealed, {
      databaseId,
      field: 'replication_password',
    }),
  };
}
