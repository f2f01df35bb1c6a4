import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Restore drills (docs/api/drills.md): their records, and on each database its last passed
 * one.
 */
export class RestoreDrills1765200000000 implements MigrationInterface {
  name = 'RestoreDrills1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE provisioner.drills (
        id              text PRIMARY KEY,
        database_id     text NOT NULL,
        kind            text NOT NULL CHECK (kind IN ('automated', 'manual')),
        status          text NOT NULL CHECK (status IN ('pending', 'running', 'passed', 'failed')),
        phase           text NOT NULL DEFAULT 'queued',
        backup_id       text,
        target_time     text,
        target_lsn      text,
        checks          jsonb NOT NULL DEFAULT '[]',
        restore_seconds double precision,
        error           text,
        scheduled_for   timestamptz,
        started_at      timestamptz NOT NULL DEFAULT now(),
        completed_at    timestamptz
      )`);
    // One drill at a time per database: a second one is OPERATION_IN_PROGRESS.
    await queryRunner.query(
      `CREATE UNIQUE INDEX drills_one_active ON provisioner.drills (database_id) WHERE status IN ('pending', 'running')`,
    );
    // One automated drill per database and slot of its schedule, whichever replica makes it.
    await queryRunner.query(
      `CREATE UNIQUE INDEX drills_one_per_slot ON provisioner.drills (database_id, scheduled_for) WHERE kind = 'automated'`,
    );
    await queryRunner.query(
      `CREATE INDEX drills_database ON provisioner.drills (database_id, started_at DESC)`,
    );
    await queryRunner.query(
      `ALTER TABLE provisioner.databases ADD COLUMN last_proven_restorable jsonb`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE provisioner.databases DROP COLUMN last_proven_restorable`);
    await queryRunner.query(`DROP TABLE provisioner.drills`);
  }
}
