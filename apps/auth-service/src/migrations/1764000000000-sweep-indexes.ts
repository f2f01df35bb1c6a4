import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Indexes for the housekeeping sweep's deletes (housekeeping/auth-sweep.ts). */
export class SweepIndexes1764000000000 implements MigrationInterface {
  name = 'SweepIndexes1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX device_requests_expires_at ON auth.device_requests (expires_at)`,
    );
    // The existing (client_ip, attempted_at) index serves the count per IP, not a delete
    // by age across every IP.
    await queryRunner.query(
      `CREATE INDEX wrong_code_attempts_attempted_at ON auth.wrong_code_attempts (attempted_at)`,
    );
    await queryRunner.query(
      `CREATE INDEX access_tokens_expires_at ON auth.access_tokens (expires_at)`,
    );
    // Few tokens are ever revoked: index only those.
    await queryRunner.query(
      `CREATE INDEX access_tokens_revoked_at ON auth.access_tokens (revoked_at) WHERE revoked_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP INDEX auth.device_requests_expires_at, auth.wrong_code_attempts_attempted_at, ` +
        `auth.access_tokens_expires_at, auth.access_tokens_revoked_at`,
    );
  }
}
