import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateRestores1763810000000 implements MigrationInterface {
  name = 'CreateRestores1763810000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE provisioner.restores (
        id                 text PRIMARY KEY,
        database_id        text NOT NULL,
        target_database_id text,
        target_database    text,
        kind               text NOT NULL CHECK (kind IN ('backup', 'pitr')),
        backup_id          text,
        target_time        timestamptz,
        status             text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
        wal_files_applied  integer,
        error              text,
        started_at         timestamptz NOT NULL DEFAULT now(),
        completed_at       timestamptz
      )`);
    // One restore at a time per database: a second one is OPERATION_IN_PROGRESS.
    await queryRunner.query(
      `CREATE UNIQUE INDEX restores_one_active ON provisioner.restores (database_id) WHERE status IN ('pending', 'running')`,
    );
    await queryRunner.query(
      `CREATE INDEX restores_database ON provisioner.restores (database_id, started_at DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE provisioner.restores`);
  }
}
