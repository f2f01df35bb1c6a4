import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tokens users see and manage: a name, a kind (device sign-in or API key), last use. */
export class TokenKinds1765000000000 implements MigrationInterface {
  name = 'TokenKinds1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE auth.access_tokens
        ADD COLUMN name         text NOT NULL DEFAULT 'device sign-in',
        ADD COLUMN kind         text NOT NULL DEFAULT 'device' CHECK (kind IN ('device', 'api_key')),
        ADD COLUMN last_used_at timestamptz`);
    // A user's live tokens, listed and counted (API keys per user).
    await queryRunner.query(
      `CREATE INDEX access_tokens_user_live ON auth.access_tokens (user_id) WHERE revoked_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX auth.access_tokens_user_live`);
    await queryRunner.query(
      `ALTER TABLE auth.access_tokens DROP COLUMN name, DROP COLUMN kind, DROP COLUMN last_used_at`,
    );
  }
}
