import type { MigrationInterface, QueryRunner } from 'typeorm';

export class StorageLimit1763790000000 implements MigrationInterface {
  name = 'StorageLimit1763790000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases ADD COLUMN storage_full boolean NOT NULL DEFAULT false`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE provisioner.databases DROP COLUMN storage_full`);
  }
}
