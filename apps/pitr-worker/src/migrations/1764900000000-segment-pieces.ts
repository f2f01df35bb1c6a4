import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A completed segment may be stored as the pieces it was uploaded in while it was written
 * (each byte of WAL goes up once): piece_ends holds where each piece ends, in order. NULL
 * is one object of the whole segment.
 */
export class SegmentPieces1764900000000 implements MigrationInterface {
  name = 'SegmentPieces1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE pitr.segments ADD COLUMN piece_ends integer[]`);
  }

  /** Only while no segment is stored as pieces: without the column they could not be found. */
  async down(queryRunner: QueryRunner): Promise<void> {
    const rows = (await queryRunner.query(
      `SELECT 1 FROM pitr.segments WHERE piece_ends IS NOT NULL LIMIT 1`,
    )) as unknown[];
    if (rows.length > 0)
      throw new Error('segments are stored as pieces: the archive needs piece_ends');
    await queryRunner.query(`ALTER TABLE pitr.segments DROP COLUMN piece_ends`);
  }
}
