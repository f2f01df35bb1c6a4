import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedBackup, CreatedRestore, Database, Project } from '@pgcloud/contracts';
import type { SignedIn, Stack } from '@pgcloud/testing';
import { ApiClient, eventually, eventuallyDefined, signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { waitForRestore } from '../support/restores.js';
import { ownStack } from '../support/shared-stack.js';

const GIB = 1024 ** 3;
/** Rows of 1900 characters that do not compress: about 1.6 GB for this many. */
const FILLER_ROWS = 840_000;
const WRITE_REFUSED =
  /read-only transaction|during recovery|cannot set transaction read-write mode|hot standby/;

/**
 * The storage fence on a shared disk: a Free database written past its 1 GiB limit inside
 * `BEGIN READ WRITE` is held read-only within a reconcile pass (every 2 s here) of passing
 * the grace (2% here), while another tenant's server goes on writing.
 */
describe('the storage fence', () => {
  let stack: Stack;
  let owner: SignedIn;
  let neighbour: SignedIn;
  let project: Project;
  let metadata: pg.Client;

  before(async () => {
    stack = await ownStack({
      RECONCILE_INTERVAL_SECONDS: '2',
      STORAGE_FENCE_GRACE_PERCENT: '2',
      STORAGE_FENCE_GRACE_MIN_MIB: '0',
    });
    owner = await signIn(new ApiClient(stack.baseUrl), 'fence-owner');
    neighbour = await signIn(new ApiClient(stack.baseUrl), 'fence-neighbour');
    project = expectData<Project>(await owner.api.post('/projects', { name: 'filling' }), 201);
    metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
  });

  after(async () => {
    await metadata?.end();
    await stack?.stop();
  });

  it('fences a server past its limit by the grace; reads go on, no write does; a restore lifts it', async () => {
    const path = `/projects/${project.id}/databases/hog`;
    const { connection } = await runningDatabase(owner.api, project.id, 'hog', { storage: 1 });
    const url = connection.connection_string;
    await psql(url, 'CREATE TABLE kept (n int); INSERT INTO kept SELECT generate_series(1, 100)');
    const backup = expectData<CreatedBackup>(await owner.api.post(`${path}/backups`), 201);
    await waitForBackup(owner.api, `${path}/backups`, backup.id);
    await psql(url, 'INSERT INTO kept SELECT generate_series(101, 200)');

    // Another tenant writes all along: every write of theirs must succeed.
    const other = await neighbourWriter();

    await psql(url, 'CREATE TABLE filler (payload text)');
    const filling = psql(
      url,
      'BEGIN READ WRITE; INSERT INTO filler SELECT repeat(chr(65 + i % 26), 1900) ' +
        `FROM generate_series(1, ${FILLER_ROWS}) i; COMMIT`,
      300_000,
    ).then(
      () => 'committed',
      (err: unknown) => String(err),
    );
    const fenced = await eventuallyDefined(
      'the fence',
      async () => {
        const database = expectData<Database>(await owner.api.get(path), 200);
        return database.storage.state === 'fenced' ? database : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 500 },
    );
    assert.equal(fenced.status, 'running', 'reads go on');
    assert.equal(fenced.storage.limit_bytes, GIB);
    assert.ok(fenced.storage.used_bytes > 1.02 * GIB, `${fenced.storage.used_bytes} bytes`);
    const outcome = await filling;
    assert.notEqual(outcome, 'committed', 'the transaction past the grace was ended');

    // Nothing committed is lost, and reads work.
    assert.equal(await readWhenUp(url, 'SELECT count(*) FROM kept'), '200');
    for (const write of [
      'BEGIN READ WRITE; INSERT INTO kept VALUES (0); COMMIT',
      'SET default_transaction_read_only = off; INSERT INTO kept VALUES (0)',
      'CREATE TABLE more (n int)',
      'ALTER DATABASE hog SET default_transaction_read_only = off',
      'TRUNCATE filler',
      'DROP TABLE filler',
      'VACUUM kept',
    ])
      await assert.rejects(psql(url, write), WRITE_REFUSED, write);

    // The event is out: in the provisioner's outbox, and sent.
    const { rows } = await eventuallyDefined(
      'database.storage_fenced sent',
      async () => {
        const found = await metadata.query<{ payload: Record<string, unknown> }>(
          `SELECT payload FROM provisioner.outbox
            WHERE event = 'database.storage_fenced' AND sent_at IS NOT NULL`,
        );
        return found.rows.length > 0 ? found : undefined;
      },
      { timeoutMs: 10_000 },
    );
    assert.equal(rows[0]?.payload['database_id'], fenced.id);

    // Still fenced a few reconcile passes later: it does not lift by itself.
    await sleep(5_000);
    const later = expectData<Database>(await owner.api.get(path), 200);
    assert.equal(later.storage.state, 'fenced');

    // A restore brings the data under: the fence lifts and writes work again.
    const restore = expectData<CreatedRestore>(
      await owner.api.post(`${path}/backups/${backup.id}/restore`),
      201,
    );
    const done = await waitForRestore(owner.api, path, restore.restore_id);
    assert.equal(done.status, 'completed', done.error);
    const restored = expectData<Database>(await owner.api.get(path), 200);
    assert.equal(restored.status, 'running');
    await eventually(
      async () => {
        const database = expectData<Database>(await owner.api.get(path), 200);
        assert.equal(database.storage.state, 'ok');
        assert.ok(database.storage.used_bytes < 0.1 * GIB);
      },
      { timeoutMs: 10_000 },
    );
    await psql(url, 'INSERT INTO kept VALUES (201)');
    assert.equal(await psql(url, 'SELECT count(*) FROM kept'), '101');

    const { written, failures } = await other.stop();
    assert.deepEqual(failures, [], "the neighbour's writes all succeeded");
    assert.ok(written > 10, `the neighbour wrote throughout (${written})`);
  });

  /** A database of another user with a writer inserting a row every 100 ms until stopped. */
  async function neighbourWriter() {
    const projectOfTheirs = expectData<Project>(
      await neighbour.api.post('/projects', { name: 'next-door' }),
      201,
    );
    const { connection } = await runningDatabase(neighbour.api, projectOfTheirs.id, 'quiet');
    const client = new pg.Client({
      connectionString: connection.connection_string.replace(
        'sslmode=require',
        'sslmode=no-verify',
      ),
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
      stop: async () => {
        running = false;
        await loop;
        const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM ticks');
        await client.end();
        assert.equal(Number(rows[0]?.n), written, 'every write the neighbour made is there');
        return { written, failures };
      },
    };
  }
});

/** A read, retried while the server restarts into its fence. */
function readWhenUp(url: string, sql: string): Promise<string> {
  return eventually(() => psql(url, sql), { timeoutMs: 30_000, intervalMs: 250 });
}
