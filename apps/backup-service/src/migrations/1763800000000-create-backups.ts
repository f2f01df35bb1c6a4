import { dropJobsTableSql, jobsTableSql } from '@pgcloud/jobs';
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateBackups1763800000000 implements MigrationInterface {
  name = 'CreateBackups1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE backups.backups (
        id              text PRIMARY KEY,
        database_id     text NOT NULL,
        project_id      text NOT NULL,
        owner_id        text NOT NULL,
        database_name   text NOT NULL,
        type            text NOT NULL CHECK (type IN ('manual', 'automated')),
        status          text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
        object_key      text NOT NULL UNIQUE,
        size_bytes      bigint NOT NULL DEFAULT 0,
        checksum_sha256 text,
        start_lsn       text,
        end_lsn         text,
        timeline        integer,
        schedule_slot   bigint,
        error           text,
        created_at      timestamptz NOT NULL DEFAULT now(),
        started_at      timestamptz,
        completed_at    timestamptz,
        expires_at      timestamptz,
        CHECK ((type = 'automated') = (schedule_slot IS NOT NULL))
      )`);
    // One automated backup per database and schedule period, whichever replica makes it.
    await queryRunner.query(
      `CREATE UNIQUE INDEX backups_schedule_slot_key ON backups.backups (database_id, schedule_slot) WHERE schedule_slot IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX backups_database ON backups.backups (database_id, created_at DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX backups_expiry ON backups.backups (expires_at) WHERE expires_at IS NOT NULL`,
    );
    await queryRunner.query(jobsTableSql('backups'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(dropJobsTableSql('backups'));
    await queryRunner.query(`DROP TABLE backups.backups`);
  }
}
