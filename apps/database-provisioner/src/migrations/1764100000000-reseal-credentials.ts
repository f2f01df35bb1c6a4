import type { MigrationInterface, QueryRunner } from 'typeorm';
import { sealCredentials } from '../credentials/sealed-credentials.js';
import type { SecretBox } from '@pgcloud/config';

interface CredentialsRow {
  database_id: string;
  password_sealed: string;
  replication_password_sealed: string;
}

/**
 * Seals every password sealed before values were bound to their rows (v1) again, bound to
 * its row and field (v2), once, in the migrations' transaction; from then on a v1 value,
 * or a v2 value copied from another row, does not open. The migration needs the key, so
 * it is made for the SecretBox the provisioner starts with.
 */
export function resealCredentials(box: SecretBox): new () => MigrationInterface {
  return class ResealCredentials1764100000000 implements MigrationInterface {
    name = 'ResealCredentials1764100000000';

    async up(queryRunner: QueryRunner): Promise<void> {
      const rows = (await queryRunner.query(
        `SELECT database_id, password_sealed, replication_password_sealed
           FROM provisioner.credentials WHERE password_sealed LIKE 'v1:%' FOR UPDATE`,
      )) as CredentialsRow[];
      // A row's two values were always sealed together, so both are v1 here.
      for (const row of rows) {
        const sealed = sealCredentials(box, row.database_id, {
          password: box.openLegacy(row.password_sealed),
          replicationPassword: box.openLegacy(row.replication_password_sealed),
        });
        await queryRunner.query(
          `UPDATE provisioner.credentials SET password_sealed = $2, replication_password_sealed = $3
            WHERE database_id = $1`,
          [row.database_id, sealed.passwordSealed, sealed.replicationPasswordSealed],
        );
      }
    }

    // Bound values stay readable by this version; versions before it never read them.
    async down(): Promise<void> {}
  };
}
