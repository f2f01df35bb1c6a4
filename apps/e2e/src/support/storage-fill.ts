import assert from 'node:assert/strict';
import type { CreatedBackup, Database, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, eventually, eventuallyDefined, signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData } from './assertions.js';
import { waitForBackup } from './backups.js';
import { psql, runningDatabase } from './databases.js';
import { sleep } from './device-flow.js';
import { ownStack } from './shared-stack.js';

export const GIB = 1024 ** 3;
/** What a fenced server answers a write of any kind. */
export const WRITE_REFUSED =
  /read-only transaction|during recovery|cannot set transaction read-write mode|hot standby/;

/**
 * A stack whose reconcile pass runs every 2 s, fencing `gracePercent` past a 1 GiB limit
 * (twice that while a cleanup window is open), its cleanup windows lasting `windowSeconds`.
 */
export function fenceStack(gracePercent: number, windowSeconds: number): Promise<Stack> {
  return ownStack({
    RECONCILE_INTERVAL_SECONDS: '2',
    STORAGE_FENCE_GRACE_PERCENT: String(gracePercent),
    STORAGE_FENCE_GRACE_MIN_MIB: '0',
    STORAGE_CLEANUP_WINDOW_SECONDS: String(windowSeconds),
  });
}

/** A Free database of 1 GiB with 200 rows committed in `kept`, backed up after the first 100. */
export async function smallDatabase(
  stack: Stack,
  login: string,
): Promise<{ owner: SignedIn; path: string; url: string; backupId: string }> {
  const owner = await signIn(new ApiClient(stack.baseUrl), login);
  const project = expectData<Project>(await owner.api.post('/projects', { name: 'filling' }), 201);
  const path = `/projects/${project.id}/databases/hog`;
  const { connection } = await runningDatabase(owner.api, project.id, 'hog', { storage: 1 });
  const url = connection.connection_string;
  await psql(url, 'CREATE TABLE kept (n int); INSERT INTO kept SELECT generate_series(1, 100)');
  const backup = expectData<CreatedBackup>(await owner.api.post(`${path}/backups`), 201);
  await waitForBackup(owner.api, `${path}/backups`, backup.id);
  await psql(
    url,
    'INSERT INTO kept SELECT generate_series(101, 200); CREATE TABLE filler (t text)',
  );
  return { owner, path, url, backupId: backup.id };
}

/**
 * Inserts about 1.9 KB a row into `filler` in one `BEGIN READ WRITE` transaction (rows that
 * do not compress); answers `committed`, or the error that ended it.
 */
export function fill(url: string, rows: number): Promise<string> {
  return psql(
    url,
    'BEGIN READ WRITE; INSERT INTO filler SELECT repeat(chr(65 + i % 26), 1900) ' +
      `FROM generate_series(1, ${rows}) i; COMMIT`,
    300_000,
  ).then(
    () => 'committed',
    (err: unknown) => String(err),
  );
}

/** The database once the API shows it in `state`. */
export function storageState(
  owner: SignedIn,
  path: string,
  state: Database['storage']['state'],
  timeoutMs = 240_000,
): Promise<Database> {
  return eventuallyDefined(
    `storage ${state}`,
    async () => {
      const database = expectData<Database>(await owner.api.get(path), 200);
      return database.storage.state === state ? database : undefined;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/** A statement, retried while the server restarts into or out of its fence. */
export function whenUp(url: string, sql: string): Promise<string> {
  return eventually(() => psql(url, sql), { timeoutMs: 30_000, intervalMs: 250 });
}

/** Waits until the server answers `sql` with an error matching `refusal`. */
export function refusedWhenUp(url: string, sql: string, refusal: RegExp): Promise<void> {
  return eventually(() => assert.rejects(psql(url, sql), refusal), {
    timeoutMs: 30_000,
    intervalMs: 250,
  });
}

/** Another user's database with a writer inserting a row every 100 ms until stopped. */
export async function neighbourWriter(stack: Stack, login: string) {
  const neighbour = await signIn(new ApiClient(stack.baseUrl), login);
  const project = expectData<Project>(
    await neighbour.api.post('/projects', { name: 'next-door' }),
    201,
  );
  const { connection } = await runningDatabase(neighbour.api, project.id, 'quiet');
  const client = new pg.Client({
    connectionString: connection.connection_string.replace('sslmode=require', 'sslmode=no-verify'),
  });
  await client.connect();
  await client.query('CREATE TABLE ticks (at timestamptz)');
  const failures: string[] = [];
  let written = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        await client.query('INSERT INTO ticks VALUES (now())');
        written += 1;
      } catch (err) {
        failures.push(String(err));
      }
      await sleep(100);
    }
  })();
  return {
    /** Stops writing, checks every write is there, and answers how it went. */
    stop: async () => {
      running = false;
      await loop;
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM ticks');
      await client.end();
      assert.equal(Number(rows[0]?.n), written, 'every write the neighbour made is there');
      return { written, failures };
    },
    /** Stops writing, whatever happened (a test that failed before it could stop). */
    halt: async () => {
      running = false;
      await loop;
      await client.end().catch(() => undefined);
    },
  };
}
