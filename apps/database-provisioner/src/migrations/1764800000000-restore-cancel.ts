import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES = (statuses: string[]) =>
  `CHECK (status IN (${statuses.map((s) => `'${s}'`).join(', ')}))`;
const BEFORE = ['pending', 'running', 'completed', 'failed'];

/**
 * A restore can be cancelled before it swaps (docs/api/restores.md#cancel): the time it was
 * asked, and the status it ends in.
 */
export class RestoreCancel1764800000000 implements MigrationInterface {
  name = 'RestoreCancel1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.restores
         ADD COLUMN cancel_requested_at timestamptz,
         DROP CONSTRAINT restores_status_check,
         ADD CONSTRAINT restores_status_check ${STATUSES([...BEFORE, 'cancelled'])}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE provisioner.restores SET status = 'failed' WHERE status = 'cancelled'`,
    );
    await queryRunner.query(
      `ALTER TABLE provisioner.restores
         DROP COLUMN cancel_requested_at,
         DROP CONSTRAINT restores_status_check,
         ADD CONSTRAINT restores_status_check ${STATUSES(BEFORE)}`,
    );
  }
}
