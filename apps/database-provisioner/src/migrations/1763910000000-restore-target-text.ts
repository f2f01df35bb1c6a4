import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A PITR target is kept as written (`...ffffffZ`): JavaScript dates hold milliseconds, and
 * a target one microsecond before a commit must not become the commit's own time.
 */
export class RestoreTargetText1763910000000 implements MigrationInterface {
  name = 'RestoreTargetText1763910000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.restores ALTER COLUMN target_time TYPE text
         USING to_char(target_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.restores ALTER COLUMN target_time TYPE timestamptz
         USING target_time::timestamptz`,
    );
  }
}
