import { quoteIdent } from '@pgcloud/postgres';
import type { MigrationInterface, QueryRunner } from 'typeorm';

const OLD_RULE = `CHECK ((type = 'automated') = (schedule_slot IS NOT NULL))`;
const NEW_RULE = `CHECK (schedule_slot IS NULL OR type = 'automated')`;

/**
 * PITR's base backups are `automated` with no schedule slot (docs/api/backups.md): a
 * slot still means automated, but automated no longer means a slot.
 */
export class PitrBaseBackups1763920000000 implements MigrationInterface {
  name = 'PitrBaseBackups1763920000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The old rule was written unnamed, so PostgreSQL named it (`backups_check`): found by
    // what it says rather than by that name.
    const rows = (await queryRunner.query(
      `SELECT conname FROM pg_constraint
       WHERE conrelid = 'backups.backups'::regclass AND contype = 'c'
         AND pg_get_constraintdef(oid) LIKE '%= (schedule_slot IS NOT NULL)%'`,
    )) as { conname: string }[];
    // Not found means this text no longer matches how PostgreSQL prints it: better to stop
    // here than to start with PITR's base backups refused.
    if (rows.length === 0)
      throw new Error('the schedule_slot check of backups.backups was not found');
    for (const { conname } of rows)
      await queryRunner.query(`ALTER TABLE backups.backups DROP CONSTRAINT ${quoteIdent(conname)}`);
    await queryRunner.query(
      `ALTER TABLE backups.backups ADD CONSTRAINT backups_schedule_slot_automated ${NEW_RULE}`,
    );
  }

  /** Fails while a PITR base backup (automated, no slot) exists: delete those first. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE backups.backups DROP CONSTRAINT backups_schedule_slot_automated`,
    );
    await queryRunner.query(`ALTER TABLE backups.backups ADD CONSTRAINT backups_check ${OLD_RULE}`);
  }
}
