import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateProjects1763770000000 implements MigrationInterface {
  name = 'CreateProjects1763770000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE projects.projects (
        id             text PRIMARY KEY,
        owner_id       text NOT NULL,
        name           text NOT NULL,
        default_region text NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT projects_owner_name_key UNIQUE (owner_id, name)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE projects.projects`);
  }
}
