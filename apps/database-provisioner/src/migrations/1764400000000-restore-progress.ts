import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Restores you can watch: where a restore's work is (`phase`) and its numbers so far. A
 * restore recorded before this is `done` when it completed; the others keep `queued`.
 */
export class RestoreProgress1764400000000 implements MigrationInterface {
  name = 'RestoreProgress1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE provisioner.restores
        ADD COLUMN phase text NOT NULL DEFAULT 'queued'
          CHECK (phase IN ('queued', 'downloading', 'replaying', 'checking', 'swapping', 'done')),
        ADD COLUMN bytes_done bigint NOT NULL DEFAULT 0,
        ADD COLUMN bytes_total bigint NOT NULL DEFAULT 0,
        ADD COLUMN wal_files_done integer NOT NULL DEFAULT 0,
        ADD COLUMN wal_files_total integer NOT NULL DEFAULT 0,
        ADD COLUMN eta_seconds integer`);
    await queryRunner.query(
      `UPDATE provisioner.restores
          SET phase = 'done',
              wal_files_done = coalesce(wal_files_applied, 0),
              wal_files_total = coalesce(wal_files_applied, 0)
        WHERE status = 'completed'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.restores DROP COLUMN phase, DROP COLUMN bytes_done,
         DROP COLUMN bytes_total, DROP COLUMN wal_files_done, DROP COLUMN wal_files_total,
         DROP COLUMN eta_seconds`,
    );
  }
}
