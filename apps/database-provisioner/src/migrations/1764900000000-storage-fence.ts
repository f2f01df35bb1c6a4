import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The storage fence: each server's measured size, and since when it is fenced. */
export class StorageFence1764900000000 implements MigrationInterface {
  name = 'StorageFence1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases
         ADD COLUMN storage_used_bytes bigint NOT NULL DEFAULT 0,
         ADD COLUMN storage_fenced_at timestamptz`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases DROP COLUMN storage_used_bytes, DROP COLUMN storage_fenced_at`,
    );
  }
}
