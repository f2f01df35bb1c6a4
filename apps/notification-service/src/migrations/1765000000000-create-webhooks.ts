import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook endpoints, the messages (one event for one endpoint) waiting for or done with
 * delivery, and the attempts made (docs/api/webhooks.md).
 */
export class CreateWebhooks1765000000000 implements MigrationInterface {
  name = 'CreateWebhooks1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The secrets are sealed (libs/config SecretBox), each bound to its endpoint's id. The
    // previous one signs beside the current one until previous_secret_until. failing_since:
    // when the attempts that have all failed since the last success began.
    await queryRunner.query(`
      CREATE TABLE notifications.endpoints (
        id                     text PRIMARY KEY,
        project_id             text NOT NULL,
        url                    text NOT NULL,
        events                 text[] NOT NULL,
        description            text,
        enabled                boolean NOT NULL DEFAULT true,
        disabled_reason        text,
        secret_sealed          text NOT NULL,
        previous_secret_sealed text,
        previous_secret_until  timestamptz,
        failing_since          timestamptz,
        created_at             timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX endpoints_project ON notifications.endpoints (project_id, created_at, id)`,
    );
    // One row per event and endpoint: its id is the webhook-id of every attempt. seq orders
    // the messages of an endpoint and database; claim names the attempt holding it, whose
    // lease is next_attempt_at.
    await queryRunner.query(`
      CREATE TABLE notifications.messages (
        id              text PRIMARY KEY,
        seq             bigserial NOT NULL,
        endpoint_id     text NOT NULL REFERENCES notifications.endpoints (id) ON DELETE CASCADE,
        event_id        text NOT NULL,
        type            text NOT NULL,
        database_id     text NOT NULL,
        body            text NOT NULL,
        status          text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts        integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        claim           text,
        created_at      timestamptz NOT NULL DEFAULT now(),
        finished_at     timestamptz,
        CONSTRAINT messages_event_endpoint_key UNIQUE (event_id, endpoint_id)
      )`);
    await queryRunner.query(
      `CREATE INDEX messages_due ON notifications.messages (next_attempt_at) WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_order ON notifications.messages (endpoint_id, database_id, seq)
        WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_endpoint ON notifications.messages (endpoint_id)`,
    );
    await queryRunner.query(`
      CREATE TABLE notifications.deliveries (
        id              text PRIMARY KEY,
        seq             bigserial NOT NULL,
        endpoint_id     text NOT NULL REFERENCES notifications.endpoints (id) ON DELETE CASCADE,
        message_id      text NOT NULL REFERENCES notifications.messages (id) ON DELETE CASCADE,
        type            text NOT NULL,
        attempt         integer NOT NULL,
        status_code     integer,
        error           text,
        duration_ms     integer NOT NULL,
        at              timestamptz NOT NULL,
        next_attempt_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX deliveries_endpoint ON notifications.deliveries (endpoint_id, seq DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX deliveries_message ON notifications.deliveries (message_id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE notifications.deliveries`);
    await queryRunner.query(`DROP TABLE notifications.messages`);
    await queryRunner.query(`DROP TABLE notifications.endpoints`);
  }
}
