/**
 * A template with one of everything docs/api/local-daemon.md counts, and things it must
 * not count. Built by the login role, as a user would.
 */
export const TEMPLATE_SQL = `
  CREATE EXTENSION pgcrypto;
  CREATE SCHEMA inventory;
  CREATE SCHEMA archive;

  CREATE TABLE public.customers (
    id int PRIMARY KEY,
    email text NOT NULL UNIQUE,
    secret bytea NOT NULL
  );
  CREATE TABLE inventory.items (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL,
    customer_id int REFERENCES public.customers (id)
  );
  CREATE INDEX items_by_name ON inventory.items (name);
  CREATE TABLE public.events (id int, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
  CREATE TABLE public.events_2025 PARTITION OF public.events
    FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
  CREATE TABLE public.events_2026 PARTITION OF public.events
    FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');

  CREATE VIEW public.customer_emails AS SELECT id, email FROM public.customers;
  CREATE MATERIALIZED VIEW inventory.item_names AS SELECT DISTINCT name FROM inventory.items;
  CREATE INDEX item_names_by_name ON inventory.item_names (name);

  CREATE FUNCTION public.email_digest(address text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$ SELECT encode(digest(address, 'sha256'), 'hex') $$;
  CREATE PROCEDURE inventory.add_item(item text)
    LANGUAGE sql AS $$ INSERT INTO inventory.items (name) VALUES (item) $$;
  CREATE AGGREGATE public.joined(text) (SFUNC = textcat, STYPE = text, INITCOND = '');

  INSERT INTO public.customers
    SELECT g, 'customer' || g || '@example.test', gen_random_bytes(16)
    FROM generate_series(1, 100) AS g;
  CALL inventory.add_item('lamp');
  CALL inventory.add_item('desk');
  INSERT INTO public.events VALUES (1, '2025-06-01'), (2, '2026-06-01');
  REFRESH MATERIALIZED VIEW inventory.item_names;

  CREATE TEMPORARY TABLE scratch (note text);
`;

/**
 * What docs/api/local-daemon.md counts in that template:
 * - tables: customers, items, events (partitioned) and its two partitions;
 * - views: customer_emails and the materialized item_names;
 * - functions: email_digest and add_item; not pgcrypto's (the extension owns them),
 *   not the aggregate joined (prokind 'a');
 * - indexes on those tables: customers' primary key and unique email, items' primary key
 *   and items_by_name, events' partitioned primary key and its two partitions' keys;
 *   not the materialized view's item_names_by_name;
 * - schemas: every one but PostgreSQL's own and the temporary pg_temp_N and
 *   pg_toast_temp_N the temporary table leaves behind; archive is empty.
 */
export const TEMPLATE_COUNTS = {
  tables: 5,
  views: 2,
  functions: 2,
  indexes: 7,
  schemas: [
    { name: 'archive', tableCount: 0 },
    { name: 'inventory', tableCount: 1 },
    { name: 'public', tableCount: 4 },
  ],
  extensions: [
    { name: 'pgcrypto', version: '1.3' },
    { name: 'plpgsql', version: '1.0' },
  ],
};
