import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Databases that expire (docs/api/databases.md#expiry): when, and the sweep's index. */
export class DatabaseExpiry1765300000000 implements MigrationInterface {
  name = 'DatabaseExpiry1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE provisioner.databases ADD COLUMN expires_at timestamptz`);
    await queryRunner.query(
      `CREATE INDEX databases_expiry ON provisioner.databases (expires_at) WHERE expires_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE provisioner.databases DROP COLUMN expires_at`);
  }
}
