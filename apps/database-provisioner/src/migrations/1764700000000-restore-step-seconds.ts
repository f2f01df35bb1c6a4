import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How long a restore's build downloaded and replayed: the rates a dry run's estimate is
 * made of (docs/api/restores.md).
 */
export class RestoreStepSeconds1764700000000 implements MigrationInterface {
  name = 'RestoreStepSeconds1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.restores ADD COLUMN download_seconds double precision,
                                        ADD COLUMN replay_seconds double precision`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.restores DROP COLUMN download_seconds, DROP COLUMN replay_seconds`,
    );
  }
}
