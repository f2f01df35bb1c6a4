import { quoteIdent } from '@pgcloud/postgres';

/** The schema-qualified, quoted name of a service's outbox table. */
export function outboxTable(schema: string): string {
  return `${quoteIdent(schema)}.outbox`;
}

/** The schema-qualified, quoted name of a service's inbox table. */
export function inboxTable(schema: string): string {
  return `${quoteIdent(schema)}.inbox`;
}

/**
 * The SQL that creates a service's outbox, for its own migration: events wait here, written
 * in the transaction of the change they tell of, until the relay has published them. `seq`
 * keeps the order they were written in; the partial index holds only what is still to send.
 */
export function outboxTableSql(schema: string): string {
  const table = outboxTable(schema);
  return `
    CREATE TABLE ${table} (
      id         text PRIMARY KEY,
      seq        bigserial NOT NULL,
      event      text NOT NULL,
      payload    jsonb NOT NULL,
      request_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at    timestamptz
    );
    CREATE INDEX outbox_unsent ON ${table} (seq) WHERE sent_at IS NULL;
    CREATE INDEX outbox_sent ON ${table} (sent_at) WHERE sent_at IS NOT NULL`;
}

/**
 * The SQL that creates a service's inbox, for its own migration: one row per event handled,
 * written in the handler's transaction, so an event delivered twice is handled once.
 */
export function inboxTableSql(schema: string): string {
  const table = inboxTable(schema);
  return `
    CREATE TABLE ${table} (
      event_id    text PRIMARY KEY,
      event       text NOT NULL,
      request_id  text NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX inbox_received ON ${table} (received_at)`;
}

/** The SQL that drops a service's outbox, for the down step of its migration. */
export function dropOutboxTableSql(schema: string): string {
  return `DROP TABLE ${outboxTable(schema)}`;
}

/** The SQL that drops a service's inbox, for the down step of its migration. */
export function dropInboxTableSql(schema: string): string {
  return `DROP TABLE ${inboxTable(schema)}`;
}

/** The schema a DataSource puts its tables in: where its service's outbox and inbox live. */
export function schemaOf(options: object, caller: string): string {
  const schema = 'schema' in options ? options.schema : undefined;
  if (typeof schema !== 'string' || schema === '')
    throw new Error(`${caller} needs a schema: set it on the DataSource`);
  return schema;
}
