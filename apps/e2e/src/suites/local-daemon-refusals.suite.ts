import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LocalDatabase, LocalDatabaseDetail, LocalDatabaseList } from '@pgcloud/contracts';
import type { ApiClient, ApiResponse } from '@pgcloud/testing';
import { ApiClient as Client } from '@pgcloud/testing';
import type pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { openSession, requestWithHost, serverDatabases } from '../support/local-daemon.js';
import { daemonApi, sharedDaemon } from '../support/shared-daemon.js';

const BAD_NAMES: unknown[] = [
  '',
  'Orders',
  '1orders',
  '_orders',
  'orders.v2',
  'orders v2',
  'ordérs',
  'a'.repeat(64),
  'x"; DROP DATABASE "refusal-base"; --',
  "x'; DROP DATABASE refusal-base; --",
  'refusal-base"--',
  42,
  null,
];

interface Snapshot {
  server: string[];
  listed: Omit<LocalDatabase, 'size'>[];
}

describe('local daemon: bad input changes nothing', () => {
  let api: ApiClient;
  let base: LocalDatabaseDetail;
  let initial: Snapshot;

  /**
   * The server's databases and oids, and the list without sizes: a size moves with the
   * server's own background work (autovacuum, analyze) on any database, whatever the
   * requests do.
   */
  async function snapshot(): Promise<Snapshot> {
    const { databases } = expectData<LocalDatabaseList>(await api.get('/databases'), 200);
    return {
      server: await serverDatabases(base.connection),
      listed: databases.map(({ size: _size, ...listed }) => listed),
    };
  }

  before(async () => {
    api = await daemonApi();
    base = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: 'refusal-base' }),
      201,
    );
    initial = await snapshot();
  });

  after(async () => {
    await api.delete('/databases/refusal-base');
  });

  it('refuses names that break the rules or try SQL injection: 400 VALIDATION_ERROR', async () => {
    for (const name of BAD_NAMES) {
      const error = expectError(await api.post('/databases', { name }), 400, 'VALIDATION_ERROR');
      assert.ok(
        error.details?.some((detail) => detail.field === 'name'),
        `details name the field: ${JSON.stringify(error.details)}`,
      );
    }
    for (const body of [{}, { template: 'refusal-base' }, { name: 'ok', extra: 1 }, []])
      expectError(await api.post('/databases', body), 400, 'VALIDATION_ERROR');
    const malformed = await api.request('POST', '/databases', {
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'VALIDATION_ERROR');
    const huge = await api.post('/databases', { name: 'big', template: 'x'.repeat(70 * 1024) });
    expectError(huge, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses a duplicate name: 409 DATABASE_NAME_TAKEN', async () => {
    expectError(await api.post('/databases', { name: 'refusal-base' }), 409, 'DATABASE_NAME_TAKEN');
    const copy = await api.post('/databases', { name: 'refusal-base', template: 'refusal-base' });
    expectError(copy, 409, 'DATABASE_NAME_TAKEN');
  });

  it('refuses an unknown template: 404 TEMPLATE_NOT_FOUND', async () => {
    for (const template of [
      'no-such-template',
      'refusal-base"; DROP DATABASE "refusal-base"; --',
      "refusal-base' OR '1'='1",
      'REFUSAL-BASE',
      'postgres',
      'template0',
      'template1',
      'pgcloud_daemon',
    ]) {
      const response = await api.post('/databases', { name: 'from-nothing', template });
      expectError(response, 404, 'TEMPLATE_NOT_FOUND');
    }
  });

  it('refuses a template with open connections: 409 TEMPLATE_IN_USE', async () => {
    let session: pg.Client | undefined;
    try {
      session = await openSession(base.connection.connectionString);
      const response = await api.post('/databases', {
        name: 'busy-copy',
        template: 'refusal-base',
      });
      expectError(response, 409, 'TEMPLATE_IN_USE');
    } finally {
      await session?.end();
    }
  });

  it("hides PostgreSQL's databases and its own: 404 on GET and DELETE, 409 on POST", async () => {
    for (const name of ['postgres', 'template0', 'template1', 'pgcloud_daemon']) {
      expectError(await api.get(`/databases/${name}`), 404, 'DATABASE_NOT_FOUND');
      expectError(await api.delete(`/databases/${name}`), 404, 'DATABASE_NOT_FOUND');
      expectError(await api.post('/databases', { name }), 409, 'DATABASE_NAME_TAKEN');
    }
  });

  it('answers unknown names, odd ones too, 404 DATABASE_NOT_FOUND', async () => {
    for (const name of [
      'no-such-db',
      'REFUSAL-BASE',
      'x"; DROP DATABASE "refusal-base',
      'a'.repeat(80),
    ]) {
      const path = `/databases/${encodeURIComponent(name)}`;
      expectError(await api.get(path), 404, 'DATABASE_NOT_FOUND');
      expectError(await api.delete(path), 404, 'DATABASE_NOT_FOUND');
    }
  });

  it('creates nothing for a request without the token or for a foreign Host', async () => {
    const daemon = await sharedDaemon();
    const responses: ApiResponse[] = [
      await new Client(daemon.baseUrl).post('/databases', { name: 'no-token' }),
      await new Client(daemon.baseUrl, 'pgcd_wrong').post('/databases', { name: 'no-token' }),
      await new Client(daemon.baseUrl).delete('/databases/refusal-base'),
    ];
    for (const response of responses) expectError(response, 401, 'AUTH_REQUIRED');
    const foreign = await requestWithHost(
      daemon.baseUrl,
      'evil.example',
      'DELETE',
      '/databases/refusal-base',
      {
        token: await daemon.token(),
      },
    );
    expectError(foreign, 403, 'FORBIDDEN_HOST');
  });

  it('leaves the server as it was: the same databases, oids and list', async () => {
    assert.deepEqual(await snapshot(), initial);
  });
});
