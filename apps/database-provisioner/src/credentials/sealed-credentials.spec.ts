import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SecretBox } from '@pgcloud/config';
import type { CredentialsEntity } from '../databases/database.entity.js';
import { openCredentials, sealCredentials, sealPassword } from './sealed-credentials.js';

const PASSWORDS = { password: 's3cret-password', replicationPassword: 'repl-password' };

describe('sealed credentials', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key);

  it('seals both passwords of a row and opens them, never showing them', () => {
    const row = sealCredentials(box, 'db_a', PASSWORDS);
    assert.ok(row.passwordSealed.startsWith('v2:'));
    assert.ok(!JSON.stringify(row).includes('s3cret'));
    assert.deepEqual(openCredentials(box, row), PASSWORDS);
  });

  it('refuses a value copied to another row or field', () => {
    const row = sealCredentials(box, 'db_a', PASSWORDS);
    const moved: CredentialsEntity = { ...row, databaseId: 'db_b' };
    assert.throws(() => openCredentials(box, moved));
    const swapped: CredentialsEntity = {
      ...row,
      passwordSealed: row.replicationPasswordSealed,
      replicationPasswordSealed: row.passwordSealed,
    };
    assert.throws(() => openCredentials(box, swapped));
  });

  it('binds values as the provisioner always did: rows sealed before the box moved still open', () => {
    // The associated data of v2 values, byte for byte (they were sealed before SecretBox
    // moved to libs/config): `pgcloud:credentials:<database id>:<field>`.
    const sealV2 = (plain: string, aad: string): string => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v2', ...[iv, cipher.getAuthTag(), body].map((p) => p.toString('base64url'))].join(
        ':',
      );
    };
    const row: CredentialsEntity = {
      databaseId: 'db_old',
      passwordSealed: sealV2('old-pw', 'pgcloud:credentials:db_old:password'),
      replicationPasswordSealed: sealV2(
        'old-repl',
        'pgcloud:credentials:db_old:replication_password',
      ),
    };
    assert.deepEqual(openCredentials(box, row), {
      password: 'old-pw',
      replicationPassword: 'old-repl',
    });
    const rotated = { ...row, passwordSealed: sealPassword(box, 'db_old', 'new-pw') };
    assert.equal(openCredentials(box, rotated).password, 'new-pw');
  });
});
