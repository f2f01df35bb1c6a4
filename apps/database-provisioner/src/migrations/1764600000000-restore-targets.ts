import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A PITR restore stops at a time, a WAL position or a restore point (docs/api/pitr.md). */
export class RestoreTargets1764600000000 implements MigrationInterface {
  name = 'RestoreTargets1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.restores ADD COLUMN target_lsn text,
                                        ADD COLUMN target_restore_point text`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.restores DROP COLUMN target_lsn, DROP COLUMN target_restore_point`,
    );
  }
}
