import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Completed segments stored zstd-compressed (docs/architecture.md#the-wal-archive-inside): the
 * size of the one object such a segment is stored as. Segments archived before stay as they
 * are, with none.
 */
export class CompressedSegments1765200000000 implements MigrationInterface {
  name = 'CompressedSegments1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE pitr.segments ADD COLUMN zstd_bytes bigint`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE pitr.segments DROP COLUMN zstd_bytes`);
  }
}
