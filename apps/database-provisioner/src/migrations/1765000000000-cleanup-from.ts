import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a database used when its owner opened a cleanup window: the window is closed early
 * only once the data grows past it by the grace (docs/api/databases.md#the-fence).
 */
export class CleanupFrom1765000000000 implements MigrationInterface {
  name = 'CleanupFrom1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases ADD COLUMN storage_cleanup_from_bytes bigint`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases DROP COLUMN storage_cleanup_from_bytes`,
    );
  }
}
