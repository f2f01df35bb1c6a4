import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { route, runCli } from './fake-api.testing.js';

const RESTORE = 'rstr_aaaaaaaaaaaaaaaaaaaa';
const inShop = ['--db', 'shop'];

const enabledConfig = {
  enabled: true,
  base_backup_id: 'bkp_aaaaaaaaaaaaaaaaaaaa',
  retention_days: 1,
  recovery_window: { from: '2026-01-01T00:00:00.000000Z', to: '2026-01-01T00:05:00.000000Z' },
};
const receiver = {
  status: 'running',
  started_at: '2026-01-01T00:00:00.000Z',
  last_wal_file: '000000010000000000000003.partial',
  bytes_received: 1024,
  errors: 0,
  lag_seconds: 1,
};

function pitrRestore(status: string) {
  return {
    id: RESTORE,
    kind: 'pitr',
    target_time: '2026-01-01T00:05:00.000000Z',
    target_database: 'shop-copy',
    status,
    wal_files_applied: 3,
    started_at: '2026-01-01T00:06:00.000Z',
  };
}

describe('pitr status', () => {
  it('prints {config, receiver} with --json', async (t) => {
    const result = await runCli(
      t,
      ['pitr', 'status', '--json', ...inShop],
      [
        route('GET', '/pitr/config', enabledConfig),
        route('GET', '/pitr/receiver-status', receiver),
      ],
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { config: enabledConfig, receiver });
  });

  it("shows the archive's health as the last check found it", async (t) => {
    const archive = {
      state: 'broken',
      newest_object_at: '2026-01-01T00:04:59.000Z',
      lag_seconds: 1,
      checked_at: '2026-01-01T00:05:00.000Z',
      problem: 'segment 000000010000000000000002 is missing from the object store',
    };
    const result = await runCli(
      t,
      ['pitr', 'status', ...inShop],
      [
        route('GET', '/pitr/config', { ...enabledConfig, archive }),
        route('GET', '/pitr/receiver-status', receiver),
      ],
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.match(result.stdout, /archive: +broken: segment 000000010000000000000002 is missing/);
    assert.match(result.stdout, /newest WAL object: +2026-01-01T00:04:59.000Z/);
  });

  it('does not ask for the receiver when PITR is not enabled', async (t) => {
    const never = {
      enabled: false,
      base_backup_id: null,
      retention_days: null,
      recovery_window: null,
    };
    const result = await runCli(
      t,
      ['pitr', 'status', '--json', ...inShop],
      [route('GET', '/pitr/config', never)],
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { config: never, receiver: null });
    assert.equal(result.requests.length, 1);
  });
});

describe('pitr argv', () => {
  it('enable sends retention_days as a number', async (t) => {
    const result = await runCli(
      t,
      ['pitr', 'enable', '--retention-days', '1', '--json', ...inShop],
      [
        route('POST', '/pitr/enable', {
          enabled: true,
          base_backup_id: 'bkp_x',
          wal_receiver_status: 'starting',
        }),
      ],
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.deepEqual(result.requests[0]?.body, { retention_days: 1 });
    assert.match(result.requests[0]?.url.pathname ?? '', /\/databases\/shop\/pitr\/enable$/);
  });

  it('enable without or with a bad --retention-days is a usage error, asking nothing', async (t) => {
    for (const args of [[], ['--retention-days', '36'], ['--retention-days', '1.5']]) {
      const result = await runCli(t, ['pitr', 'enable', ...args, ...inShop], []);
      assert.equal(result.exitCode, 2, args.join(' '));
      assert.deepEqual(result.requests, []);
    }
  });

  it('restore without a target, or with two, is a usage error, asking nothing', async (t) => {
    for (const args of [
      [],
      ['--to', 'latest', '--lsn', '0/1'],
      ['--lsn', '0/1', '--restore-point', 'a'],
    ]) {
      const result = await runCli(t, ['pitr', 'restore', ...args, ...inShop], []);
      assert.equal(result.exitCode, 2, args.join(' '));
      assert.match(result.stderr, /--to/);
      assert.deepEqual(result.requests, []);
    }
  });

  it('restore sends --lsn and --restore-point as target_lsn and target_restore_point', async (t) => {
    for (const [flag, value, field] of [
      ['--lsn', '0/3000148', 'target_lsn'],
      ['--restore-point', 'before-migration', 'target_restore_point'],
    ] as const) {
      const result = await runCli(
        t,
        ['pitr', 'restore', flag, value, '--json', ...inShop],
        [
          route('POST', '/pitr/restore', {
            restore_id: RESTORE,
            [field]: value,
            status: 'pending',
          }),
        ],
      );
      assert.equal(result.exitCode, undefined, result.stderr);
      assert.deepEqual(result.requests[0]?.body, { [field]: value });
    }
  });

  it('restore --dry-run asks for the plan and prints it', async (t) => {
    const plan = {
      kind: 'pitr',
      base_backup_id: 'bkp_aaaaaaaaaaaaaaaaaaaa',
      base_backup_size_bytes: 4096,
      wal_files: 3,
      wal_bytes: 50331648,
      target_lsn: '0/3000148',
      estimated_seconds: 12,
    };
    const json = await runCli(
      t,
      ['pitr', 'restore', '--lsn', '0/3000148', '--dry-run', '--json', ...inShop],
      [route('POST', '/pitr/restore', { plan })],
    );
    assert.equal(json.exitCode, undefined, json.stderr);
    assert.equal(json.requests[0]?.url.searchParams.get('dry_run'), 'true');
    assert.deepEqual(json.requests[0]?.body, { target_lsn: '0/3000148' });
    assert.deepEqual(JSON.parse(json.stdout), { plan });
    const table = await runCli(
      t,
      ['pitr', 'restore', '--lsn', '0/3000148', '--dry-run', ...inShop],
      [route('POST', '/pitr/restore', { plan })],
    );
    assert.match(table.stdout, /wal files:\s+3 \(48/);
    assert.match(table.stdout, /estimated:\s+12 s/);
  });

  it('cancel-restore cancels through the restores route and prints the restore', async (t) => {
    const cancelled = { ...pitrRestore('cancelled') };
    const result = await runCli(
      t,
      ['cancel-restore', RESTORE, '--json', ...inShop],
      [route('POST', `/restores/${RESTORE}/cancel`, cancelled)],
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.match(
      result.requests[0]?.url.pathname ?? '',
      /\/databases\/shop\/restores\/rstr_a+\/cancel$/,
    );
    assert.deepEqual(JSON.parse(result.stdout), cancelled);
  });

  it('restore-point sends the name; restore-points lists them', async (t) => {
    const point = {
      name: 'before-migration',
      lsn: '0/3000148',
      created_at: '2026-01-01T00:00:00Z',
    };
    const made = await runCli(
      t,
      ['pitr', 'restore-point', 'before-migration', '--json', ...inShop],
      [route('POST', '/pitr/restore-points', point)],
    );
    assert.equal(made.exitCode, undefined, made.stderr);
    assert.deepEqual(made.requests[0]?.body, { name: 'before-migration' });
    assert.deepEqual(JSON.parse(made.stdout), point);
    const listed = await runCli(
      t,
      ['pitr', 'restore-points', ...inShop],
      [route('GET', '/pitr/restore-points', { restore_points: [point] })],
    );
    assert.equal(listed.exitCode, undefined, listed.stderr);
    assert.match(listed.stdout, /before-migration\s+0\/3000148/);
  });

  it('a command without --db is a usage error', async (t) => {
    const result = await runCli(t, ['pitr', 'window'], []);
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /--db/);
  });

  it('wal passes --limit and --cursor as the query', async (t) => {
    const page = { archives: [], total_count: 0, total_size_bytes: 0, next_cursor: null };
    const result = await runCli(
      t,
      ['pitr', 'wal', '--limit', '5', '--cursor', 'abc', '--json', ...inShop],
      [route('GET', '/pitr/wal', page)],
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.equal(result.requests[0]?.url.searchParams.get('limit'), '5');
    assert.equal(result.requests[0]?.url.searchParams.get('cursor'), 'abc');
    assert.deepEqual(JSON.parse(result.stdout), page);
  });
});

describe('pitr restore --wait', () => {
  it('sends the target as given and prints the final restore as GET pitr/restores/ID answers', async (t) => {
    for (const to of ['latest', '2026-01-01T00:05:00.123456Z']) {
      const result = await runCli(
        t,
        ['pitr', 'restore', '--to', to, '--into', 'shop-copy', '--wait', '--json', ...inShop],
        [
          route('POST', '/pitr/restore', {
            restore_id: RESTORE,
            target_time: '2026-01-01T00:05:00.000000Z',
            status: 'pending',
            started_at: '2026-01-01T00:06:00.000Z',
          }),
          route('GET', `/pitr/restores/${RESTORE}`, pitrRestore('completed')),
        ],
      );
      assert.equal(result.exitCode, undefined, result.stderr);
      assert.deepEqual(result.requests[0]?.body, { target_time: to, target_database: 'shop-copy' });
      assert.deepEqual(JSON.parse(result.stdout), pitrRestore('completed'));
    }
  });

  it('exits 1 when the restore fails, the final state on stdout with --json', async (t) => {
    const result = await runCli(
      t,
      ['pitr', 'restore', '--to', 'latest', '--wait', '--json', ...inShop],
      [
        route('POST', '/pitr/restore', { restore_id: RESTORE, status: 'pending' }),
        route('GET', `/pitr/restores/${RESTORE}`, pitrRestore('failed')),
      ],
    );
    assert.equal(result.exitCode, 1);
    assert.deepEqual(result.requests[0]?.body, { target_time: 'latest' });
    assert.deepEqual(JSON.parse(result.stdout), pitrRestore('failed'));
    assert.match(result.stderr, /RESTORE_FAILED/);
  });
});
