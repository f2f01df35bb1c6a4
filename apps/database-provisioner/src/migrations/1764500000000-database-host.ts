import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every database record names the host its server is reached at, as its driver answered it
 * (the kubernetes driver gives each database its own address). Until now every record was
 * served at DATABASE_HOST, so the rows there are filled with it; the migration is made for
 * that host. The host stays null while a server is being made.
 */
export function databaseHost(host: string): new () => MigrationInterface {
  return class DatabaseHost1764500000000 implements MigrationInterface {
    name = 'DatabaseHost1764500000000';

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`ALTER TABLE provisioner.databases ADD COLUMN host text`);
      await queryRunner.query(
        `UPDATE provisioner.databases SET host = $1 WHERE status <> 'provisioning'`,
        [host],
      );
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`ALTER TABLE provisioner.databases DROP COLUMN host`);
    }
  };
}
