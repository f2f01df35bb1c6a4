import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How far a broken archive is whole (docs/api/pitr.md#archive-health): each segment records
 * the newest moment whose commits all lie in it or before it, and a broken archive the
 * moment and position its recovery window stops at.
 */
export class ArchiveIntact1765100000000 implements MigrationInterface {
  name = 'ArchiveIntact1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE pitr.segments ADD COLUMN covered_until timestamptz`);
    await queryRunner.query(
      `ALTER TABLE pitr.archives ADD COLUMN intact_until timestamptz, ADD COLUMN intact_lsn bigint`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE pitr.archives DROP COLUMN intact_until, DROP COLUMN intact_lsn`,
    );
    await queryRunner.query(`ALTER TABLE pitr.segments DROP COLUMN covered_until`);
  }
}
