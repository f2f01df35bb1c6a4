import { dropJobsTableSql, jobsTableSql } from '@pgcloud/jobs';
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateDatabases1763780000000 implements MigrationInterface {
  name = 'CreateDatabases1763780000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE provisioner.databases (
        id                  text PRIMARY KEY,
        project_id          text NOT NULL,
        owner_id            text NOT NULL,
        name                text NOT NULL,
        region              text NOT NULL,
        platform_service_id text NOT NULL UNIQUE,
        status              text NOT NULL
          CHECK (status IN ('provisioning', 'running', 'restoring', 'failed', 'deleting')),
        config              jsonb NOT NULL,
        port                integer NOT NULL,
        error               text,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      )`);
    // A deleted database frees its name at once; its port only once its server is gone.
    await queryRunner.query(
      `CREATE UNIQUE INDEX databases_project_name_key ON provisioner.databases (project_id, name) WHERE status <> 'deleting'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX databases_port_key ON provisioner.databases (port)`,
    );
    await queryRunner.query(`CREATE INDEX databases_project ON provisioner.databases (project_id)`);
    await queryRunner.query(`
      CREATE TABLE provisioner.credentials (
        database_id                 text PRIMARY KEY REFERENCES provisioner.databases (id) ON DELETE CASCADE,
        password_sealed             text NOT NULL,
        replication_password_sealed text NOT NULL
      )`);
    await queryRunner.query(jobsTableSql('provisioner'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(dropJobsTableSql('provisioner'));
    await queryRunner.query(`DROP TABLE provisioner.credentials, provisioner.databases`);
  }
}
