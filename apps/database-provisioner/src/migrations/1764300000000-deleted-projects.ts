import type { MigrationInterface, QueryRunner } from 'typeorm';

export class DeletedProjects1764300000000 implements MigrationInterface {
  name = 'DeletedProjects1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Projects project-service announced deleted: a create that raced the delete is refused.
    await queryRunner.query(`
      CREATE TABLE provisioner.deleted_projects (
        project_id text PRIMARY KEY,
        deleted_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE provisioner.deleted_projects`);
  }
}
