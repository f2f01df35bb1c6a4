import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database, Project } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import type { SignedIn } from '@pgcloud/testing';
import { eventuallyDefined, signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { psql, serverDirs, waitForStatus, waitUntilClosed } from '../support/databases.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

const DAY = 86_400_000;
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

/**
 * Databases that expire (docs/api/databases.md#expiry), on the shared stack, whose sweep
 * looks every second: gone with their server and data once their time passes, announced;
 * the bounds of each tier; an expiry moved or cleared by PATCH.
 */
describe('databases that expire', () => {
  let stack: Stack;
  let owner: SignedIn;
  let project: Project;
  let metadata: pg.Client;
  const databasesPath = () => `/projects/${project.id}/databases`;

  before(async () => {
    stack = await sharedStack();
    metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
    owner = await signIn(await newClient(), uniqueLogin('expirer'));
    project = expectData<Project>(await owner.api.post('/projects', { name: 'ephemeral' }), 201);
  });

  after(async () => {
    await metadata?.end();
  });

  it('is deleted once its time passes, with its server and data, and says so', async () => {
    const expiresAt = inMs(8000);
    const created = expectData<Database>(
      await owner.api.post(databasesPath(), { name: 'preview', expires_at: expiresAt }),
      201,
    );
    assert.equal(created.expires_at, expiresAt);
    const running = await waitForStatus(owner.api, project.id, 'preview', ['running']);
    assert.equal(running.expires_at, expiresAt);
    const url = expectData<{ connection_string: string; port: number }>(
      await owner.api.get(`${databasesPath()}/preview/url`),
      200,
    );
    assert.equal(await psql(url.connection_string, 'SELECT 1'), '1');

    await eventuallyDefined(
      'the database is gone',
      async () => {
        const answer = await owner.api.get(`${databasesPath()}/preview`);
        return answer.status === 404 ? answer : undefined;
      },
      { timeoutMs: 20_000 },
    );
    assert.ok(Date.now() >= Date.parse(expiresAt), 'not before its time');
    await waitUntilClosed(url.port);
    await eventuallyDefined('its data is removed', () =>
      Promise.resolve(
        serverDirs(stack.dataDir).includes(created.platform_service_id) ? undefined : true,
      ),
    );
    const { rows } = await metadata.query<{ event: string }>(
      `SELECT event FROM provisioner.outbox
        WHERE payload->>'database_id' = $1 AND event IN ('database.expired', 'database.deleted')
        ORDER BY event`,
      [created.id],
    );
    assert.deepEqual(
      rows.map((row) => row.event),
      ['database.deleted', 'database.expired'],
    );
  });

  it('keeps an expiry within a year, and a Free one within 30 days', async () => {
    const refused = async (expires_at: unknown, status: number, code: string) =>
      expectError(
        await owner.api.post(databasesPath(), { name: 'bounded', expires_at }),
        status,
        code,
      );
    await refused(inMs(31 * DAY), 403, 'QUOTA_EXCEEDED');
    await refused(inMs(366 * DAY), 400, 'VALIDATION_ERROR');
    await refused(inMs(-1000), 400, 'VALIDATION_ERROR');
    await refused('tomorrow', 400, 'VALIDATION_ERROR');
    await refused('2026-12-01T12:00:00', 400, 'VALIDATION_ERROR');
    const never = expectData<Database>(
      await owner.api.post(databasesPath(), { name: 'kept', expires_at: null }),
      201,
    );
    assert.equal(never.expires_at, null);
    expectData(await owner.api.delete(`${databasesPath()}/kept`), 200);

    const login = uniqueLogin('pro-expirer');
    await signIn(await newClient(), login);
    await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
    const pro = await signIn(await newClient(), login);
    const proProject = expectData<Project>(await pro.api.post('/projects', { name: 'long' }), 201);
    const expiresAt = inMs(200 * DAY);
    const long = expectData<Database>(
      await pro.api.post(`/projects/${proProject.id}/databases`, {
        name: 'long-lived',
        expires_at: expiresAt,
      }),
      201,
    );
    assert.equal(long.expires_at, expiresAt);
    expectData(await pro.api.delete(`/projects/${proProject.id}/databases/long-lived`), 200);
  });

  it('moves or clears an expiry by PATCH, within the same bounds', async () => {
    const path = `${databasesPath()}/moved`;
    const created = expectData<Database>(
      await owner.api.post(databasesPath(), { name: 'moved', expires_at: inMs(4000) }),
      201,
    );
    const later = inMs(2 * DAY);
    assert.equal(
      expectData<Database>(await owner.api.patch(path, { expires_at: later }), 200).expires_at,
      later,
    );
    const refused = async (body: unknown, status: number, code: string) =>
      expectError(await owner.api.patch(path, body), status, code);
    await refused({ expires_at: inMs(31 * DAY) }, 403, 'QUOTA_EXCEEDED');
    await refused({ expires_at: inMs(-1000) }, 400, 'VALIDATION_ERROR');
    await refused({}, 400, 'VALIDATION_ERROR');
    await refused({ config: { storage: 0 } }, 400, 'VALIDATION_ERROR');
    await refused({ config: { storage: 20 } }, 403, 'QUOTA_EXCEEDED');
    expectError(
      await owner.api.patch(`${databasesPath()}/absent`, { expires_at: null }),
      404,
      'DATABASE_NOT_FOUND',
    );
    assert.equal(expectData<Database>(await owner.api.get(path), 200).expires_at, later);
    // Cleared: it outlives the time it was first given, the sweep looking every second.
    assert.equal(
      expectData<Database>(await owner.api.patch(path, { expires_at: null }), 200).expires_at,
      null,
    );
    await new Promise((resolve) => setTimeout(resolve, 6000));
    const kept = expectData<Database>(await owner.api.get(path), 200);
    assert.equal(kept.id, created.id);
    assert.equal(kept.expires_at, null);
    expectData(await owner.api.delete(path), 200);
  });
});
