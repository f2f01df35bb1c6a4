import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { branchBody } from './branches.js';
import { expiryOf } from './databases.js';
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
    last_proven_restorable: null,
    expires_at: null,
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

  it('get shows when a drill last proved the database restorable', async (t) => {
    const proven = database('running', {
      last_proven_restorable: {
        at: '2026-11-28T10:00:00.000Z',
        drill_id: 'drl_aaaaaaaaaaaaaaaaaaaa',
        backup_id: 'bkp_aaaaaaaaaaaaaaaaaaaa',
        restore_seconds: 6.25,
      },
    });
    const result = await runCli(
      t,
      ['db', 'get', 'orders'],
      [route('GET', '/databases/orders', proven)],
    );
    assert.match(
      result.stdout,
      /proven restorable: +2026-11-28T10:00:00.000Z by drl_a+ \(backup bkp_a+, restored in 6\.3 s\)/,
    );
  });

  it('rotate-password prints the new connection string', async (t) => {
    const details = {
      host: '127.0.0.1',
      port: 5433,
      database: 'orders',
      user: 'orders',
      connection_string: 'postgresql://orders:new-secret@127.0.0.1:5433/orders?sslmode=require',
    };
    const result = await runCli(
      t,
      ['db', 'rotate-password', 'orders'],
      [route('POST', '/databases/orders/credentials/rotate', details)],
    );
    assert.equal(result.requests[0]?.method, 'POST');
    assert.equal(result.stdout, `${details.connection_string}\n`);
    assert.match(result.stderr, /old password go on until they end/);
  });

  it('expire --in sends a time that far ahead, --never sends null', async (t) => {
    const at = '2026-12-24T18:00:00.000Z';
    const later = await runCli(
      t,
      ['db', 'expire', 'orders', '--in', '24h'],
      [route('PATCH', '/databases/orders', database('running', { expires_at: at }))],
    );
    const sent = (later.requests[0]?.body as { expires_at: string }).expires_at;
    assert.ok(Math.abs(Date.parse(sent) - Date.now() - 86_400_000) < 60_000, sent);
    assert.equal(later.stdout, `Database orders expires at ${at}.\n`);
    const never = await runCli(
      t,
      ['db', 'expire', 'orders', '--never'],
      [route('PATCH', '/databases/orders', database('running'))],
    );
    assert.deepEqual(never.requests[0]?.body, { expires_at: null });
    assert.equal(never.stdout, 'Database orders does not expire.\n');
  });

  it('resize --wait sends only the sizes given and waits until it runs', async (t) => {
    const resized = { config: { cpu: 1, memory: 4, storage: 10 } };
    const result = await runCli(
      t,
      ['db', 'resize', 'orders', '--memory', '4', '--wait', '--json'],
      [
        route('PATCH', '/databases/orders', database('resizing', resized)),
        route('GET', '/databases/orders', database('running', resized)),
      ],
    );
    assert.equal(result.exitCode, undefined);
    assert.deepEqual(result.requests[0]?.body, { config: { memory: 4 } });
    assert.deepEqual(JSON.parse(result.stdout), database('running', resized));
  });

  it('resize without a size is a usage error, and sends nothing', async (t) => {
    const result = await runCli(t, ['db', 'resize', 'orders'], []);
    assert.equal(result.exitCode, 2);
    assert.equal(result.requests.length, 0);
    assert.match(result.stderr, /--cpu, --memory or --storage/);
  });

  it('branch --wait sends the source and waits until the branch runs', async (t) => {
    const result = await runCli(
      t,
      ['db', 'branch', 'orders', 'orders-pr-1', '--wait', '--json'],
      [
        route('POST', '/databases', database('restoring', { name: 'orders-pr-1' })),
        route('GET', '/databases/orders-pr-1', database('running', { name: 'orders-pr-1' })),
      ],
    );
    assert.equal(result.exitCode, undefined);
    assert.deepEqual(result.requests[0]?.body, {
      name: 'orders-pr-1',
      from: { database: 'orders' },
    });
    assert.equal((JSON.parse(result.stdout) as { status: string }).status, 'running');
  });

  it('branch takes at most one target, and an expiry from now', () => {
    assert.deepEqual(branchBody('shop', 'pr', { lsn: '0/3000148', expiresIn: '24h' }, 0), {
      name: 'pr',
      from: { database: 'shop', target_lsn: '0/3000148' },
      expires_at: new Date(86_400_000).toISOString(),
    });
    assert.deepEqual(branchBody('shop', 'pr', { restorePoint: 'before' }).from, {
      database: 'shop',
      target_restore_point: 'before',
    });
    assert.throws(
      () => branchBody('shop', 'pr', { at: '2026-01-01T00:00:00Z', lsn: '0/1' }),
      /at most one/,
    );
  });

  it('expire wants exactly one of --in, --at and --never', () => {
    assert.throws(() => expiryOf({}), /exactly one/);
    assert.throws(() => expiryOf({ in: '1h', never: true }), /exactly one/);
    assert.throws(() => expiryOf({ in: 'soon' }), /duration/);
    assert.equal(expiryOf({ at: '2026-12-24T18:00:00Z' }), '2026-12-24T18:00:00Z');
    assert.equal(expiryOf({ in: '90m' }, 0), new Date(90 * 60_000).toISOString());
  });
});
