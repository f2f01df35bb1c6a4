import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreatePitr1763900000000 implements MigrationInterface {
  name = 'CreatePitr1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // One row per database that has (or had) PITR: its settings, its archive and the
    // receiver that fills it, claimed by one replica at a time through the lease.
    await queryRunner.query(`
      CREATE TABLE pitr.archives (
        database_id          text PRIMARY KEY,
        project_id           text NOT NULL,
        owner_id             text NOT NULL,
        database_name        text NOT NULL,
        enabled              boolean NOT NULL,
        retention_days       integer NOT NULL CHECK (retention_days BETWEEN 1 AND 35),
        base_backup_id       text,
        timeline             integer,
        start_lsn            bigint,
        slot_to_drop         boolean NOT NULL DEFAULT false,
        paused_for_restore   boolean NOT NULL DEFAULT false,
        paused_at            timestamptz,
        keep_from            timestamptz,
        hold_from            timestamptz,
        hold_until           timestamptz,
        enabled_at           timestamptz NOT NULL DEFAULT now(),
        disabled_at          timestamptz,
        receiver_status      text NOT NULL
          CHECK (receiver_status IN ('starting', 'running', 'stopped', 'error')),
        receiver_started_at  timestamptz NOT NULL DEFAULT now(),
        receiver_errors      integer NOT NULL DEFAULT 0,
        receiver_generation  integer NOT NULL DEFAULT 0,
        bytes_received       bigint NOT NULL DEFAULT 0,
        archived_lsn         bigint,
        last_wal_file        text,
        window_to            timestamptz,
        latest_wal_time      timestamptz,
        lease_owner          text,
        lease_expires_at     timestamptz
      )`);
    await queryRunner.query(`
      CREATE TABLE pitr.segments (
        database_id  text NOT NULL,
        name         text NOT NULL,
        timeline     integer NOT NULL,
        segno        bigint NOT NULL,
        object_key   text NOT NULL,
        size_bytes   bigint NOT NULL,
        archived_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (database_id, name)
      )`);
    await queryRunner.query(
      `CREATE INDEX segments_position ON pitr.segments (database_id, timeline, segno)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE pitr.segments`);
    await queryRunner.query(`DROP TABLE pitr.archives`);
  }
}
