import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Archive health (docs/api/pitr.md#archive-health): each segment records the ETag the object
 * store answered for each of its objects, so a check can tell from a listing that one went
 * missing or changed; each archive records what the last check found.
 */
export class ArchiveHealth1765000000000 implements MigrationInterface {
  name = 'ArchiveHealth1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE pitr.segments ADD COLUMN etags text[]`);
    await queryRunner.query(
      `ALTER TABLE pitr.archives
         ADD COLUMN archive_state text,
         ADD COLUMN archive_problem text,
         ADD COLUMN archive_checked_at timestamptz,
         ADD COLUMN newest_object_at timestamptz`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE pitr.archives
         DROP COLUMN archive_state, DROP COLUMN archive_problem,
         DROP COLUMN archive_checked_at, DROP COLUMN newest_object_at`,
    );
    await queryRunner.query(`ALTER TABLE pitr.segments DROP COLUMN etags`);
  }
}
