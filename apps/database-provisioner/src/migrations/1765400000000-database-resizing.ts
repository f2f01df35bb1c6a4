import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES = (statuses: string[]) =>
  `CHECK (status IN (${statuses.map((s) => `'${s}'`).join(', ')}))`;
const BEFORE = ['provisioning', 'running', 'restoring', 'failed', 'deleting'];

/** A database being resized (docs/api/databases.md#resizing) is `resizing`. */
export class DatabaseResizing1765400000000 implements MigrationInterface {
  name = 'DatabaseResizing1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases
         DROP CONSTRAINT databases_status_check,
         ADD CONSTRAINT databases_status_check ${STATUSES([...BEFORE, 'resizing'])}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // A resize under way is left to the server as it is: its record says running.
    await queryRunner.query(
      `UPDATE provisioner.databases SET status = 'running' WHERE status = 'resizing'`,
    );
    await queryRunner.query(
      `ALTER TABLE provisioner.databases
         DROP CONSTRAINT databases_status_check,
         ADD CONSTRAINT databases_status_check ${STATUSES(BEFORE)}`,
    );
  }
}
