import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Named WAL positions a PITR restore can stop at (docs/api/pitr.md#restore-points), each of
 * one archive: its timeline and first position. They go with the archive's row.
 */
export class RestorePoints1764600000000 implements MigrationInterface {
  name = 'RestorePoints1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE pitr.restore_points (
        database_id        text NOT NULL REFERENCES pitr.archives (database_id) ON DELETE CASCADE,
        timeline           integer NOT NULL,
        archive_start_lsn  bigint NOT NULL,
        name               text NOT NULL,
        lsn                bigint NOT NULL,
        created_at         timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (database_id, timeline, archive_start_lsn, name)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE pitr.restore_points`);
  }
}
