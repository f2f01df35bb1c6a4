import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { PROJECT, route, runCli } from './fake-api.testing.js';

const GIB = 1024 ** 3;

function database(status: string, more: Record<string, unknown> = {}) {
  return {
    id: 'db_aaaaaaaaaaaaaaaaaaaa',
    project_id: PROJECT,
    name: 'orders',
    platform_service_id: 'srv_aaaaaaaaaaaaaaaaaaaa',
    region: 'local',
    status,
    config: { cpu: 1, memory: 1, storage: 10 },
    created_at: '2026-01-01T00:00:00.000Z',
    storage: { used_bytes: 0, limit_bytes: 10 * GIB, state: 'ok' },
    ...more,
  };
}

describe('db', () => {
  afterEach(() => {
    process.exitCode = undefined;
  });

  it('create --wait sends only the sizes given and prints the running database with --json', async (t) => {
    const result = await runCli(
      t,
      ['db', 'create', 'orders', '--memory', '2', '--wait', '--json'],
      [
        route('POST', '/databases', database('provisioning')),
        route('GET', '/databases/orders', database('running')),
      ],
    );
    assert.equal(result.exitCode, undefined);
    assert.deepEqual(result.requests[0]?.body, { name: 'orders', config: { memory: 2 } });
    assert.equal(result.requests[1]?.method, 'GET');
    assert.deepEqual(JSON.parse(result.stdout), database('running'));
  });

  it('create --wait stops at failed, printing the reason and exiting 1', async (t) => {
    const result = await runCli(
      t,
      ['db', 'create', 'orders', '--wait'],
      [
        route('POST', '/databases', database('provisioning')),
        route('GET', '/databases/orders', database('failed', { error: 'initdb ran out of disk' })),
      ],
    );
    assert.equal(result.exitCode, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /database orders failed: initdb ran out of disk/);
  });

  it('get shows what the server takes against its limit, and a fence', async (t) => {
    const fenced = database('running', {
      config: { cpu: 1, memory: 1, storage: 1 },
      storage: { used_bytes: 1.3 * GIB, limit_bytes: GIB, state: 'fenced' },
    });
    const result = await runCli(
      t,
      ['db', 'get', 'orders'],
      [route('GET', '/databases/orders', fenced)],
    );
    assert.match(result.stdout, /used: +1\.3 GiB of 1 GiB \(fenced\)/);
  });

  it('cleanup lifts the fence and says until when', async (t) => {
    const until = '2026-01-01T00:15:00.000Z';
    const opened = database('running', {
      storage: {
        used_bytes: 1.3 * GIB,
        limit_bytes: GIB,
        state: 'read_only',
        cleanup_until: until,
      },
    });
    const result = await runCli(
      t,
      ['db', 'cleanup', 'orders'],
      [route('POST', '/databases/orders/storage/cleanup', opened)],
    );
    assert.equal(result.requests[0]?.method, 'POST');
    assert.match(result.stdout, new RegExp(`lifted until ${until}`));
  });
});
