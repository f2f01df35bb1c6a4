import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConnectionDetails, Database, Project } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import type { SignedIn } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { lsnValue } from '../support/pitr.js';
import { psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { runPgbench } from '../support/pgbench.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

/** A marker row, and the WAL positions just before its insert and just after its commit. */
interface Marker {
  k: number;
  before: bigint;
  after: bigint;
}

/**
 * Branches of a live database (docs/api/databases.md#branches): a copy of its server made
 * while pgbench writes to it, holding exactly what was committed up to the recorded point;
 * its parent and the source's branches listed; nobody else's database branched.
 */
describe('branches of a live database', () => {
  let stack: Stack;
  let owner: SignedIn;
  let shopProject: Project;
  let previews: Project;
  let source: ConnectionDetails;
  let sourceDb: Database;

  before(async () => {
    stack = await sharedStack();
    const login = uniqueLogin('brancher');
    await signIn(await newClient(), login);
    await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
    owner = await signIn(await newClient(), login);
    shopProject = expectData<Project>(await owner.api.post('/projects', { name: 'shop' }), 201);
    previews = expectData<Project>(await owner.api.post('/projects', { name: 'previews' }), 201);
    ({ database: sourceDb, connection: source } = await runningDatabase(
      owner.api,
      shopProject.id,
      'shop',
      { storage: 20 },
    ));
    await runPgbench(source, ['-i', '-q', '-s', '1']);
    await psql(source.connection_string, 'CREATE TABLE markers (k int PRIMARY KEY)');
  });

  after(async () => {
    await owner?.api.delete(`/projects/${previews.id}?force=true`);
    await owner?.api.delete(`/projects/${shopProject.id}?force=true`);
  });

  it('copies the live server under pgbench: every row committed before the answer, none past its point', async () => {
    const client = new pg.Client({
      connectionString: source.connection_string.replace('sslmode=require', ''),
      ssl: { rejectUnauthorized: false },
    });
    await client.connect();
    const lsnNow = async () =>
      lsnValue(
        (await client.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0]
          ?.l ?? '0/0',
      );
    const markers: Marker[] = [];
    const mark = async (k: number) => {
      const before = await lsnNow();
      await client.query('INSERT INTO markers VALUES ($1)', [k]);
      markers.push({ k, before, after: await lsnNow() });
    };
    const history = async () =>
      Number(await psql(source.connection_string, 'SELECT count(*) FROM pgbench_history'));

    const stop = new AbortController();
    const load = runPgbench(source, ['-n', '-c', '2', '-j', '2', '-T', '120'], stop.signal);
    let writing = true;
    let next = 1;
    let written: Promise<void> = Promise.resolve();
    let branch: Database;
    let historyBefore: number;
    try {
      await sleep(500);
      historyBefore = await history();
      await mark(next++); // just before the request
      const lastBefore = next - 1;
      written = (async () => {
        while (writing) {
          await mark(next++);
          await sleep(20);
        }
      })();
      const created = expectData<Database>(
        await owner.api.post(`/projects/${previews.id}/databases`, {
          name: 'shop-pr-1',
          from: { database: 'shop', project_id: shopProject.id },
        }),
        201,
      );
      assert.equal(created.status, 'restoring');
      assert.deepEqual(created.config, sourceDb.config, "the source's size");
      assert.deepEqual(created.parent, {
        database_id: sourceDb.id,
        name: 'shop',
        project_id: shopProject.id,
        lsn: null,
        at: null,
      });
      branch = await waitForStatus(owner.api, previews.id, 'shop-pr-1', ['running', 'failed']);
      assert.equal(branch.status, 'running', branch.error);
      assert.ok(
        (await history()) > historyBefore,
        'the source took writes throughout (pgbench went on)',
      );
      writing = false;
      await written;
      const point = lsnValue(branch.parent?.lsn ?? '0/0');
      assert.ok(point > 0n, `a recorded point: ${branch.parent?.lsn}`);
      assert.ok(Date.parse(branch.parent?.at ?? '') > Date.parse(created.created_at));
      const url = expectData<ConnectionDetails>(
        await owner.api.get(`/projects/${previews.id}/databases/shop-pr-1/url`),
        200,
      );
      const copied = new Set(
        (await psql(url.connection_string, 'SELECT k FROM markers ORDER BY k'))
          .split('\n')
          .filter(Boolean)
          .map(Number),
      );
      assert.ok(copied.has(lastBefore), 'the marker written just before the request');
      for (const marker of markers) {
        if (marker.after <= point) assert.ok(copied.has(marker.k), `marker ${marker.k} is there`);
        if (marker.before >= point) assert.ok(!copied.has(marker.k), `marker ${marker.k} is not`);
      }
      assert.ok(
        markers.some((marker) => marker.before >= point),
        'the source took markers after the point too',
      );
      // Its own database now: writes to it leave the source as it is.
      await psql(url.connection_string, 'INSERT INTO markers VALUES (-1)');
      assert.equal(
        await psql(source.connection_string, 'SELECT count(*) FROM markers WHERE k = -1'),
        '0',
      );
      assert.match(
        await psql(url.connection_string, 'SELECT count(*) FROM pgbench_accounts'),
        /^100000$/,
      );
    } finally {
      writing = false;
      stop.abort();
      await Promise.allSettled([load, written]);
      await client.end();
    }
  });

  it("lists a database's branches, and branches nobody else's database", async () => {
    const listed = expectData<{ branches: Database[] }>(
      await owner.api.get(`/projects/${shopProject.id}/databases/shop/branches`),
      200,
    );
    assert.deepEqual(
      listed.branches.map((b) => [b.name, b.project_id, b.parent?.database_id]),
      [['shop-pr-1', previews.id, sourceDb.id]],
    );
    const other = await signIn(await newClient(), uniqueLogin('outsider'));
    const theirs = expectData<Project>(await other.api.post('/projects', { name: 'theirs' }), 201);
    expectError(
      await other.api.post(`/projects/${theirs.id}/databases`, {
        name: 'stolen',
        from: { database: 'shop', project_id: shopProject.id },
      }),
      404,
      'PROJECT_NOT_FOUND',
    );
    expectError(
      await other.api.post(`/projects/${theirs.id}/databases`, {
        name: 'stolen',
        from: { database: 'shop' },
      }),
      404,
      'DATABASE_NOT_FOUND',
    );
    expectError(
      await other.api.get(`/projects/${shopProject.id}/databases/shop/branches`),
      404,
      'PROJECT_NOT_FOUND',
    );
    // A size given in part: the rest is the source's, not the defaults of a new database.
    const sized = expectData<Database>(
      await owner.api.post(`/projects/${previews.id}/databases`, {
        name: 'shop-sized',
        from: { database: 'shop', project_id: shopProject.id },
        config: { memory: 2 },
      }),
      201,
    );
    assert.deepEqual(sized.config, { cpu: 1, memory: 2, storage: 20 });
    expectData(await owner.api.delete(`/projects/${previews.id}/databases/shop-sized`), 200);
    const theirList = expectData<{ databases: Database[] }>(
      await other.api.get(`/projects/${theirs.id}/databases`),
      200,
    );
    assert.deepEqual(theirList.databases, [], 'nothing was made');
    for (const from of [
      { database: 'Bad Name' },
      { database: 'shop', target_lsn: 'later' },
      { database: 'shop', target_time: '2026-01-01T00:00:00Z', target_lsn: '0/1' },
      'shop',
    ])
      expectError(
        await owner.api.post(`/projects/${previews.id}/databases`, { name: 'bad', from }),
        400,
        'VALIDATION_ERROR',
      );
    expectError(
      await owner.api.post(`/projects/${previews.id}/databases`, {
        name: 'elsewhere',
        region: 'nowhere',
        from: { database: 'shop', project_id: shopProject.id },
      }),
      400,
      'VALIDATION_ERROR',
    );
  });
});
