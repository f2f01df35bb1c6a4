import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateAuth1763770000000 implements MigrationInterface {
  name = 'CreateAuth1763770000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE SEQUENCE auth.local_identity_id_seq`);
    await queryRunner.query(`
      CREATE TABLE auth.users (
        id                text PRIMARY KEY,
        identity_provider text NOT NULL,
        identity_id       bigint NOT NULL,
        login             text NOT NULL,
        email             text NOT NULL,
        tier              text NOT NULL DEFAULT 'free' CHECK (tier IN ('free', 'pro')),
        created_at        timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT users_identity_key UNIQUE (identity_provider, identity_id)
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX users_local_login_key ON auth.users (lower(login)) WHERE identity_provider = 'local'`,
    );
    await queryRunner.query(`
      CREATE TABLE auth.device_requests (
        id               text PRIMARY KEY,
        device_code_hash text NOT NULL UNIQUE,
        user_code        text NOT NULL UNIQUE,
        status           text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'exchanged')),
        interval_seconds integer NOT NULL,
        last_polled_at   timestamptz,
        expires_at       timestamptz NOT NULL,
        user_id          text REFERENCES auth.users (id) ON DELETE CASCADE,
        created_at       timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE auth.wrong_code_attempts (
        id           bigserial PRIMARY KEY,
        client_ip    text NOT NULL,
        attempted_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX wrong_code_attempts_ip_time ON auth.wrong_code_attempts (client_ip, attempted_at)`,
    );
    await queryRunner.query(`
      CREATE TABLE auth.access_tokens (
        id         text PRIMARY KEY,
        token_hash text NOT NULL UNIQUE,
        user_id    text NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP TABLE auth.access_tokens, auth.wrong_code_attempts, auth.device_requests, auth.users`,
    );
    await queryRunner.query(`DROP SEQUENCE auth.local_identity_id_seq`);
  }
}
