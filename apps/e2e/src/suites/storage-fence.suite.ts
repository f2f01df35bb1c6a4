import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import { eventually, eventuallyDefined } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { psql } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import {
  GIB,
  WRITE_REFUSED,
  fenceStack,
  fill,
  neighbourWriter,
  refusedWhenUp,
  smallDatabase,
  storageState,
  whenUp,
} from '../support/storage-fill.js';

/**
 * The storage fence on a shared disk: a Free database written past its 1 GiB limit inside
 * `BEGIN READ WRITE` is held read-only within a reconcile pass of passing the grace, while
 * another tenant's server goes on writing; a cleanup window lets its owner make room.
 * Fenced again inside a window, and lifted by a restore: storage-fence-again.suite.ts.
 */
/** Database- and role-level settings of the server that name a read-only setting. */
const READ_ONLY_OVERRIDES =
  "SELECT count(*) FROM pg_db_role_setting WHERE setconfig::text LIKE '%read_only%'";

describe('the storage fence', () => {
  let stack: Stack;
  let metadata: pg.Client;

  before(async () => {
    // Fenced past 1.34 GB (while a window is open, past 1.61 GB, or 256 MiB past its start
    // when the filling overshot the fence); windows of 12 s.
    stack = await fenceStack(25, 12);
    metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
  });

  after(async () => {
    await metadata?.end();
    await stack?.stop();
  });

  it('fences past the grace, no write passes; a cleanup window lets the owner make room', async (t) => {
    const { owner, path, url } = await smallDatabase(stack, 'fence-owner');
    const other = await neighbourWriter(stack, 'fence-neighbour');
    t.after(() => other.halt());

    const filling = fill(url, 1_000_000); // about 1.9 GB, cut off past 1.34 GB
    const fenced = await storageState(owner, path, 'fenced');
    assert.equal(fenced.status, 'running', 'reads go on');
    assert.equal(fenced.storage.limit_bytes, GIB);
    assert.ok(fenced.storage.used_bytes > 1.25 * GIB, `${fenced.storage.used_bytes} bytes`);
    assert.notEqual(await filling, 'committed', 'the transaction past the grace was ended');

    // Nothing committed is lost, reads work, and no write of any kind passes.
    assert.equal(await whenUp(url, 'SELECT count(*) FROM kept'), '200');
    for (const write of [
      'BEGIN READ WRITE; INSERT INTO kept VALUES (0); COMMIT',
      'SET default_transaction_read_only = off; INSERT INTO kept VALUES (0)',
      'CREATE TABLE more (n int)',
      'ALTER DATABASE hog SET default_transaction_read_only = off',
      'TRUNCATE filler',
      'VACUUM filler',
    ])
      await assert.rejects(psql(url, write), WRITE_REFUSED, write);

    // The event is out: in the provisioner's outbox, and sent.
    const event = await eventuallyDefined(
      'database.storage_fenced sent',
      async () => {
        const { rows } = await metadata.query<{ payload: Record<string, unknown> }>(
          `SELECT payload FROM provisioner.outbox
            WHERE event = 'database.storage_fenced' AND sent_at IS NOT NULL`,
        );
        return rows[0];
      },
      { timeoutMs: 10_000 },
    );
    assert.equal(event.payload['database_id'], fenced.id);
    await sleep(2_500); // another reconcile pass: the fence does not lift by itself
    assert.equal(expectData<Database>(await owner.api.get(path), 200).storage.state, 'fenced');

    // A cleanup window: the soft read-only mode, writable inside BEGIN READ WRITE.
    const opened = expectData<Database>(await owner.api.post(`${path}/storage/cleanup`), 200);
    assert.equal(opened.storage.state, 'read_only');
    const closesIn = Date.parse(opened.storage.cleanup_until ?? '') - Date.now();
    assert.ok(closesIn > 6_000 && closesIn <= 12_000, `the window closes in ${closesIn} ms`);
    const again = await owner.api.post(`${path}/storage/cleanup`);
    expectError(again, 409, 'COOLDOWN_ACTIVE');
    assert.ok(Number(again.headers.get('retry-after')) > 3500, 'Retry-After about an hour');
    await refusedWhenUp(url, 'INSERT INTO kept VALUES (0)', /read-only transaction/);
    assert.equal(await psql(url, 'SHOW temp_file_limit'), '1GB', 'temp files capped at 1 GiB');
    // Settings that would lift the read-only mode are reset within a reconcile pass.
    await psql(
      url,
      'BEGIN READ WRITE; ' +
        'ALTER DATABASE hog SET default_transaction_read_only = off; ' +
        'ALTER ROLE hog SET default_transaction_read_only = off; ' +
        'ALTER ROLE hog IN DATABASE hog SET default_transaction_read_only = off; ' +
        'ALTER DATABASE hog SET transaction_read_only = off; COMMIT',
    );
    await eventually(
      async () => {
        assert.equal(await psql(url, READ_ONLY_OVERRIDES), '0');
        await assert.rejects(psql(url, 'INSERT INTO kept VALUES (0)'), /read-only transaction/);
      },
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    // TRUNCATE frees the room at once; a DELETE of the filler writes as much WAL again as
    // it frees, and its VACUUM can outlast the window on a loaded machine. VACUUM runs too.
    await psql(url, 'BEGIN READ WRITE; TRUNCATE filler; COMMIT');
    await psql(url, 'VACUUM kept');
    const cleaned = await storageState(owner, path, 'ok', 20_000);
    assert.ok(cleaned.storage.used_bytes < 0.1 * GIB, `${cleaned.storage.used_bytes} bytes`);
    await psql(url, 'INSERT INTO kept VALUES (201)');

    // Past the window's end, under the limit: the fence stays off.
    await eventually(
      async () => {
        const database = expectData<Database>(await owner.api.get(path), 200);
        assert.equal(database.storage.cleanup_until, undefined, 'the window ended');
        assert.equal(database.storage.state, 'ok');
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
    await sleep(2_500); // one more pass after it
    assert.equal(expectData<Database>(await owner.api.get(path), 200).storage.state, 'ok');
    assert.equal(await psql(url, 'SELECT count(*) FROM kept'), '201');

    const { written, failures } = await other.stop();
    assert.deepEqual(failures, [], "the neighbour's writes all succeeded");
    assert.ok(written > 10, `the neighbour wrote throughout (${written})`);
  });
});
