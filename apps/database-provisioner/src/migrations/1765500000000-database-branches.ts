import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Branches (docs/api/databases.md#branches): the database a branch was made from, as it
 * was named then, and the point it was copied at (known once the branch runs).
 */
export class DatabaseBranches1765500000000 implements MigrationInterface {
  name = 'DatabaseBranches1765500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases
         ADD COLUMN parent_database_id text,
         ADD COLUMN parent_name text,
         ADD COLUMN parent_project_id text,
         ADD COLUMN parent_lsn text,
         ADD COLUMN parent_at timestamptz`,
    );
    await queryRunner.query(
      `CREATE INDEX databases_parent ON provisioner.databases (parent_database_id)
        WHERE parent_database_id IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE provisioner.databases
         DROP COLUMN parent_database_id, DROP COLUMN parent_name, DROP COLUMN parent_project_id,
         DROP COLUMN parent_lsn, DROP COLUMN parent_at`,
    );
  }
}
