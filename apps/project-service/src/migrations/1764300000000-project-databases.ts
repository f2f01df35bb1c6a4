import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ProjectDatabases1764300000000 implements MigrationInterface {
  name = 'ProjectDatabases1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The databases of each project as database.created and database.deleted told them:
    // database_count, and the refusal to delete a project that has some, read it here
    // instead of asking the provisioner. A deleted one stays as a tombstone, so a
    // database.created handled after its database.deleted does not count it again.
    await queryRunner.query(`
      CREATE TABLE projects.project_databases (
        database_id text PRIMARY KEY,
        project_id  text NOT NULL,
        deleted     boolean NOT NULL DEFAULT false
      )`);
    await queryRunner.query(
      `CREATE INDEX project_databases_project ON projects.project_databases (project_id) WHERE NOT deleted`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE projects.project_databases`);
  }
}
