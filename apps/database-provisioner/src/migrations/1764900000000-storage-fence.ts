import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The storage fence: each server's measured size, since when it is fenced, and its owner's
 * cleanup windows.
 */
export class StorageFence1764900000000 implements MigrationInterface {
  name = 'StorageFence1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases
         ADD COLUMN storage_used_bytes bigint NOT NULL DEFAULT 0,
         ADD COLUMN storage_fenced_at timestamptz,
         ADD COLUMN storage_cleanup_at timestamptz,
         ADD COLUMN storage_cleanup_until timestamptz`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases DROP COLUMN storage_used_bytes, DROP COLUMN storage_fenced_at,
         DROP COLUMN storage_cleanup_at, DROP COLUMN storage_cleanup_until`,
    );
  }
}
