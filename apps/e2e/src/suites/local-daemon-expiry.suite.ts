import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { LocalDatabaseDetail, LocalDatabaseList } from '@pgcloud/contracts';
import { LocalDaemon } from '@pgcloud/devstack';
import type { ApiClient } from '@pgcloud/testing';
import { eventually } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { serverDatabases, sql } from '../support/local-daemon.js';

/**
 * Local databases that expire or are temporary (docs/api/local-daemon.md#expiry), on a
 * daemon of their own whose sweep looks every second: dropped once their time passes,
 * also when it passed while the daemon was down; temporary ones when the daemon stops.
 */
describe('local daemon: databases that expire', () => {
  let daemon: LocalDaemon;
  let api: ApiClient;
  let kept: LocalDatabaseDetail;

  /** The databases the daemon's server holds, by name. */
  async function onServer(): Promise<string[]> {
    return (await serverDatabases(kept.connection)).map((entry) => entry.split(':')[0] ?? '');
  }

  async function create(body: Record<string, unknown>): Promise<LocalDatabaseDetail> {
    return expectData<LocalDatabaseDetail>(await api.post('/databases', body), 201);
  }

  before(async () => {
    daemon = await LocalDaemon.start('expiry', { DAEMON_EXPIRY_SWEEP_SECONDS: '1' });
    api = await daemon.api();
    kept = await create({ name: 'kept' });
  });

  after(async () => {
    await daemon?.stop();
  });

  it('drops a database once its ttl passes, and not one whose expiry was cleared', async () => {
    const asked = Date.now();
    const brief = await create({ name: 'brief', ttlSeconds: 3 });
    const expiresAt = Date.parse(brief.expiresAt ?? '');
    assert.ok(expiresAt >= asked + 3000 && expiresAt <= Date.now() + 3000, brief.expiresAt ?? '');
    assert.equal(brief.temporary, false);
    const listed = expectData<LocalDatabaseList>(await api.get('/databases'), 200);
    assert.equal(listed.databases.find((d) => d.name === 'brief')?.expiresAt, brief.expiresAt);
    await create({ name: 'reprieved', ttlSeconds: 3 });
    const cleared = expectData<LocalDatabaseDetail>(
      await api.patch('/databases/reprieved', { expiresAt: null }),
      200,
    );
    assert.equal(cleared.expiresAt, null);

    await eventually(
      async () => expectError(await api.get('/databases/brief'), 404, 'DATABASE_NOT_FOUND'),
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    assert.ok(Date.now() >= expiresAt, 'not before its time');
    // The API stops showing it once its drop has begun; the server's catalogue a moment later.
    await eventually(async () =>
      assert.ok(!(await onServer()).includes('brief'), 'dropped from the server'),
    );
    await sleep(1500);
    expectData(await api.get('/databases/reprieved'), 200);
  });

  it('drops at its next start a database whose time passed while it was down', async () => {
    const late = await create({ name: 'late', ttlSeconds: 2 });
    await daemon.stopProcess();
    await sleep(Math.max(0, Date.parse(late.expiresAt ?? '') - Date.now()) + 500);
    await daemon.restart();
    expectError(await api.get('/databases/late'), 404, 'DATABASE_NOT_FOUND');
    assert.ok(!(await onServer()).includes('late'));
  });

  it('drops a temporary database when it stops, and keeps the others', async () => {
    const scratch = await create({ name: 'scratch', temporary: true });
    assert.equal(scratch.temporary, true);
    assert.equal(scratch.expiresAt, null);
    const [one] = await sql<{ one: number }>(
      scratch.connection.connectionString,
      'SELECT 1 AS one',
    );
    assert.equal(one?.one, 1);
    await daemon.restart();
    expectError(await api.get('/databases/scratch'), 404, 'DATABASE_NOT_FOUND');
    const databases = await onServer();
    assert.ok(!databases.includes('scratch'), 'dropped from the server');
    assert.ok(databases.includes('kept') && databases.includes('reprieved'));
  });

  it('refuses lifetimes out of bounds, and changes nothing for them', async () => {
    const refused = async (body: Record<string, unknown>) =>
      expectError(
        await api.post('/databases', { name: 'bounded', ...body }),
        400,
        'VALIDATION_ERROR',
      );
    await refused({ ttlSeconds: 0 });
    await refused({ ttlSeconds: 31 * 86_400 });
    await refused({ ttlSeconds: 60, expiresAt: new Date(Date.now() + 60_000).toISOString() });
    await refused({ expiresAt: new Date(Date.now() - 1000).toISOString() });
    await refused({ temporary: 'yes' });
    expectError(await api.get('/databases/bounded'), 404, 'DATABASE_NOT_FOUND');
    expectError(await api.patch('/databases/kept', {}), 400, 'VALIDATION_ERROR');
    expectError(
      await api.patch('/databases/absent', { ttlSeconds: 60 }),
      404,
      'DATABASE_NOT_FOUND',
    );
    assert.equal(
      expectData<LocalDatabaseDetail>(await api.get('/databases/kept'), 200).expiresAt,
      null,
    );
  });
});
