import { tmpdir } from 'node:os';
import {
  checkTlsLogin,
  ensureCertificateAuthority,
  scramSha256Verifier,
  withSuperuser,
} from '@pgcloud/postgres';
import { canConnect, findSecretsInLogs, freePort } from '@pgcloud/testing';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import type { ServerSpec } from '../database-driver.js';
import { REPLICATION_ROLE } from '../database-driver.js';
import { RestoreSources } from '../conformance/restore-sources.js';
import { LocalDriver } from './local.driver.js';
import { restorePaths } from './restore-paths.js';
import { driverPaths, serverPaths } from './server-paths.js';

// In the temp folder, like the test stacks: wherever CI clones the checkout, PostgreSQL's
// user reaches it and the socket paths stay short.
const testsDir = join(tmpdir(), 'pgcloud-test-drivers');
const dataDir = join(testsDir, randomBytes(4).toString('hex'));
const settings = {
  pgBinDir:
    process.env.PG_BIN_DIR ?? execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim(),
  osUser: process.env.PG_OS_USER ?? 'postgres',
  dataDir,
  host: '127.0.0.1',
  listenAddress: '127.0.0.1',
};

// A secret of the provisioner's own environment, set before any server starts: none of
// its servers may be given it.
const PROVISIONER_SECRET = `canary-${randomBytes(12).toString('hex')}`;
process.env['PGCLOUD_TEST_PROVISIONER_SECRET'] = PROVISIONER_SECRET;
/**
 * All a server's environment may hold: the provisioner's fixed PATH and locale, and what
 * postgres sets itself (the data directory, its own paths). No shell started it.
 */
const SERVER_ENV = ['PATH', 'LC_ALL', 'PGDATA', 'PGLOCALEDIR', 'PGSYSCONFDIR'];

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

async function postmasterPid(pgdata: string): Promise<number> {
  return Number((await readFile(join(pgdata, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await delay(50);
  }
}

describe('LocalDriver against real PostgreSQL servers', () => {
  const driver = new LocalDriver(settings);
  let spec: ServerSpec;
  let caPem: string;

  /** Runs work as the application role over verified TLS (or without TLS, to see it fail). */
  async function asApp<T>(
    work: (client: pg.Client) => Promise<T>,
    options: { password?: string; tls?: boolean } = {},
  ): Promise<T> {
    const client = new pg.Client({
      host: settings.host,
      port: spec.port,
      user: spec.databaseName,
      database: spec.databaseName,
      password: options.password ?? spec.password,
      ssl: options.tls === false ? false : { ca: caPem, rejectUnauthorized: true },
      connectionTimeoutMillis: 5000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await work(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  before(async () => {
    spec = {
      serverId: `srv_${randomBytes(10).toString('hex')}`,
      port: await freePort(),
      region: 'local',
      databaseName: 'app_db',
      password: randomBytes(24).toString('base64url'),
      replicationPassword: randomBytes(24).toString('base64url'),
      config: { cpu: 1, memory: 1, storage: 10 },
    };
  });

  after(async () => {
    // Stop whatever a failed test left running, by the pid file if the driver cannot.
    for (const serverId of await driver.list().catch(() => [])) {
      await driver.destroy(serverId).catch(async (err: unknown) => {
        console.error(`cleanup of ${serverId}:`, err);
        const pid = await postmasterPid(serverPaths(dataDir, serverId).pgdata).catch(() => 0);
        if (pid > 0) process.kill(pid, 'SIGKILL');
      });
    }
    await rm(dataDir, { recursive: true, force: true });
    await rmdir(testsDir).catch(() => undefined); // only when no other run still uses it
  });

  it('makes one template and one CA even when two drivers prepare at once', async () => {
    const started = performance.now();
    await Promise.all([driver.prepare(), new LocalDriver(settings).prepare()]);
    console.log(
      `prepare (initdb of the template, CA): ${Math.round(performance.now() - started)} ms`,
    );
    const { templateDir, caDir } = driverPaths(dataDir);
    assert.ok(await exists(join(templateDir, 'PG_VERSION')));
    const leftovers = (await readdir(join(dataDir, 'local'))).filter((name) => name !== 'servers');
    assert.deepEqual(leftovers, ['template']);
    assert.deepEqual((await readdir(dataDir)).sort(), ['ca', 'local']);
    assert.deepEqual((await readdir(caDir)).sort(), ['ca.key', 'ca.pem']);
    caPem = await driver.caCertificate();
    assert.match(caPem, /^-----BEGIN CERTIFICATE-----/);
  });

  it('creates a running server in well under a second from the template', async () => {
    const started = performance.now();
    const endpoint = await driver.create(spec);
    const elapsed = Math.round(performance.now() - started);
    console.log(`create (copy, certificate, start, roles and database): ${elapsed} ms`);
    assert.deepEqual(endpoint, { host: settings.host, port: spec.port });
    assert.equal(await driver.state(spec.serverId), 'running');
    assert.deepEqual(await driver.list(), [spec.serverId]);
  });

  it('accepts a verified TLS login as the application role, encrypted', async () => {
    const login = { host: settings.host, port: spec.port, database: 'app_db', user: 'app_db' };
    assert.equal(await checkTlsLogin({ ...login, password: spec.password, caPem }), true);
    const otherCa = await ensureCertificateAuthority(join(dataDir, 'other-ca'));
    await assert.rejects(
      checkTlsLogin({ ...login, password: spec.password, caPem: otherCa.pem }),
      (err: Error) => /certificate/i.test(err.message) && !err.message.includes(spec.password),
    );
    await rm(join(dataDir, 'other-ca'), { recursive: true });
  });

  it('sizes the server from its config and keeps rows', async () => {
    await asApp(async (client) => {
      const { rows } = await client.query<{ shared_buffers: string }>('SHOW shared_buffers');
      assert.equal(rows[0]?.shared_buffers, '256MB');
      await client.query('CREATE TABLE notes (id int PRIMARY KEY, body text)');
      await client.query("INSERT INTO notes VALUES (1, 'kept')");
      const read = await client.query<{ body: string }>('SELECT body FROM notes WHERE id = 1');
      assert.equal(read.rows[0]?.body, 'kept');
    });
  });

  it('enforces its limits: temp_file_limit, and no setting that lifts the read-only mode', async () => {
    const address = { socketDir: serverPaths(dataDir, spec.serverId).socketDir, port: spec.port };
    const sessionsOfApp = () =>
      withSuperuser(address, 5000, async (client) => {
        const { rows } = await client.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = 'app_db'",
        );
        return rows[0]?.n ?? 0;
      });
    const tempFileLimit = () =>
      asApp(
        async (client) =>
          (await client.query<{ temp_file_limit: string }>('SHOW temp_file_limit')).rows[0]
            ?.temp_file_limit,
      );
    assert.equal(await tempFileLimit(), '10GB', 'set at creation');
    // A server made before temp_file_limit was set.
    await withSuperuser(address, 5000, async (client) => {
      await client.query('ALTER SYSTEM SET temp_file_limit = -1');
      await client.query('SELECT pg_reload_conf()');
    });
    await waitUntil(async () => (await tempFileLimit()) === '-1', 5000);
    await asApp(async (client) => {
      await client.query('ALTER DATABASE app_db SET default_transaction_read_only = off');
      await client.query('ALTER ROLE app_db SET transaction_read_only = off');
      await client.query("ALTER ROLE app_db SET work_mem = '8MB'");
      await client.query(
        'ALTER ROLE app_db IN DATABASE app_db SET default_transaction_read_only = on',
      );
    });
    // A session that started under the overrides: writable for its whole life.
    let ended: Promise<unknown> = Promise.resolve();
    const openedBefore = asApp(async (client) => {
      ended = new Promise((resolve) => client.on('error', resolve));
      await client.query('SELECT 1');
      await ended;
    });
    await waitUntil(async () => (await sessionsOfApp()) >= 1, 5000);
    const limits = { databaseName: 'app_db', storageGib: 10, atLimit: true };
    const changed = await driver.enforceLimits(spec.serverId, limits);
    assert.equal(changed.length, 4, changed.join('; '));
    assert.match(changed.join('; '), /ended 1 sessions/);
    await openedBefore; // its connection was ended by the server
    await ended;
    await waitUntil(async () => (await tempFileLimit()) === '10GB', 5000);
    const settings = await withSuperuser(address, 5000, async (client) => {
      const { rows } = await client.query<{ setconfig: string[] }>(
        'SELECT setconfig FROM pg_db_role_setting ORDER BY setdatabase',
      );
      return rows.map((row) => row.setconfig);
    });
    // The owner's own choices stay: work_mem, and a read-only mode it turned on itself.
    assert.deepEqual(settings, [['work_mem=8MB'], ['default_transaction_read_only=on']]);
    assert.deepEqual(await driver.enforceLimits(spec.serverId, limits), [], 'nothing more');
    await asApp(async (client) => {
      await client.query('BEGIN READ WRITE');
      await client.query('ALTER ROLE app_db RESET ALL');
      await client.query('ALTER ROLE app_db IN DATABASE app_db RESET ALL');
      await client.query('COMMIT');
    });
  });

  it('stores the same SCRAM verifier PostgreSQL would, and a replication role', async () => {
    const { socketDir } = serverPaths(dataDir, spec.serverId);
    const roles = await withSuperuser({ socketDir, port: spec.port }, 5000, async (client) => {
      const result = await client.query<{
        rolname: string;
        rolpassword: string;
        rolreplication: boolean;
      }>(
        "SELECT rolname, rolpassword, rolreplication FROM pg_authid WHERE rolname IN ('app_db', 'pgcloud_replication') ORDER BY rolname",
      );
      return result.rows;
    });
    assert.deepEqual(
      roles.map((role) => [role.rolname, role.rolreplication]),
      [
        ['app_db', false],
        ['pgcloud_replication', true],
      ],
    );
    const stored = roles[0]?.rolpassword ?? '';
    const [, iterations, salt] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(stored) ?? [];
    const recomputed = scramSha256Verifier(spec.password, {
      salt: Buffer.from(salt ?? '', 'base64'),
      iterations: Number(iterations),
    });
    assert.equal(recomputed, stored);
  });

  it('keeps both passwords out of the server log', () => {
    const { serverDir } = serverPaths(dataDir, spec.serverId);
    const secrets = new Set([spec.password, spec.replicationPassword]);
    const { leaks, bytesScanned } = findSecretsInLogs([serverDir], secrets);
    assert.ok(bytesScanned > 0, 'the server log is empty');
    assert.deepEqual(leaks, []);
  });

  it("starts the server with none of the provisioner's environment", async () => {
    const pid = await postmasterPid(serverPaths(dataDir, spec.serverId).pgdata);
    const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').filter(Boolean);
    const names = environ.map((entry) => entry.slice(0, entry.indexOf('=')));
    assert.deepEqual(
      names.filter((name) => !SERVER_ENV.includes(name)),
      [],
      `the postmaster's environment: ${names.join(' ')}`,
    );
    assert.ok(names.includes('PATH'));
    assert.ok(!environ.some((entry) => entry.includes(PROVISIONER_SECRET)));
  });

  it('comes back after kill -9 of the postmaster, data intact', async () => {
    const { pgdata } = serverPaths(dataDir, spec.serverId);
    process.kill(await postmasterPid(pgdata), 'SIGKILL');
    await waitUntil(async () => (await driver.state(spec.serverId)) !== 'running', 5000);
    assert.equal(await driver.state(spec.serverId), 'stopped');
    const started = performance.now();
    assert.deepEqual(await driver.ensureRunning(spec.serverId), {
      host: settings.host,
      port: spec.port,
    });
    console.log(`ensureRunning after kill -9: ${Math.round(performance.now() - started)} ms`);
    assert.equal(await driver.state(spec.serverId), 'running');
    const { rows } = await asApp((client) =>
      client.query<{ body: string }>('SELECT body FROM notes'),
    );
    assert.deepEqual(rows, [{ body: 'kept' }]);
  });

  it('holds a server for a restore: no write whatever the client sends, then lets go on its own timeline', async () => {
    const { socketDir } = serverPaths(dataDir, spec.serverId);
    const timeline = () =>
      withSuperuser({ socketDir, port: spec.port }, 5000, async (client) => {
        const { rows } = await client.query<{ tli: number }>(
          'SELECT timeline_id AS tli FROM pg_control_checkpoint()',
        );
        return rows[0]?.tli;
      });
    const before = await timeline();
    const refusal = (sql: string[]) =>
      asApp(async (client) => {
        for (const statement of sql) await client.query(statement);
      }).then(
        () => 'written',
        (err: Error) => err.message,
      );
    await driver.holdForRestore(spec.serverId);
    await driver.holdForRestore(spec.serverId); // held already: no second restart
    const insert = "INSERT INTO notes VALUES (2, 'during the hold')";
    assert.match(await refusal([insert]), /read-only transaction/);
    assert.match(await refusal(['BEGIN READ WRITE', insert, 'COMMIT']), /read-write mode/);
    assert.match(
      await refusal(['SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE', insert]),
      /read-only transaction/,
    );
    const alter = `ALTER DATABASE ${spec.databaseName} SET default_transaction_read_only = off`;
    assert.match(await refusal([alter]), /read-only transaction/);
    const { rows } = await asApp((client) =>
      client.query<{ body: string }>('SELECT body FROM notes'),
    );
    assert.deepEqual(rows, [{ body: 'kept' }], 'reads go on');

    await driver.abandonRestore(spec.serverId);
    assert.equal(await refusal([insert]), 'written');
    assert.equal(await timeline(), before, 'the old data goes on on its own timeline');
    await asApp((client) => client.query("DELETE FROM notes WHERE body = 'during the hold'"));
  });

  it('stops a restore build cancelled while it recovers: rejected, no checking server left', async () => {
    const sources = await RestoreSources.start();
    try {
      const archive = await sources.baseBackup(settings.pgBinDir, {
        host: settings.host,
        port: spec.port,
        user: REPLICATION_ROLE,
        password: spec.replicationPassword,
        caPem,
      });
      const { restoreDir } = restorePaths(serverPaths(dataDir, spec.serverId));
      await driver.holdForRestore(spec.serverId);
      const cancel = new AbortController();
      await assert.rejects(
        driver.buildRestore({
          serverId: spec.serverId,
          restoreId: `rst_${randomBytes(8).toString('hex')}`,
          archive,
          archivedDatabaseName: spec.databaseName,
          databaseName: spec.databaseName,
          password: spec.password,
          replicationPassword: spec.replicationPassword,
          signal: cancel.signal,
          progress: {
            // The checking server is on its way up, or replaying, when the cancel comes.
            step: (step) =>
              void (
                step === 'recover' &&
                setTimeout(() => cancel.abort(new Error('cancelled by the test')), 100)
              ),
            downloaded: () => undefined,
          },
        }),
        /cancelled by the test/,
      );
      assert.ok(cancel.signal.aborted, 'rejected for the cancel, not before it');
      assert.equal(
        await exists(join(restoreDir, 'postmaster.pid')),
        false,
        'the checking server was stopped',
      );
      await driver.abandonRestore(spec.serverId);
      const { rows } = await asApp((client) =>
        client.query<{ body: string }>('SELECT body FROM notes'),
      );
      assert.deepEqual(rows, [{ body: 'kept' }], 'the server as it was');
    } finally {
      await sources.stop();
    }
  });

  it('refuses a recovery target beyond its grammar before writing anything', async () => {
    const { restoreDir } = restorePaths(serverPaths(dataDir, spec.serverId));
    const planted = join(dataDir, 'planted');
    const hostile = [
      { restorePoint: `x'; $(touch ${planted})` },
      { restorePoint: "it's" },
      { restorePoint: 'line\nrestore_command = touch planted' },
      { time: `2026-11-24T07:00:00Z' $(touch ${planted})` },
      { lsn: '0/3000148"' },
    ];
    for (const target of hostile) {
      await assert.rejects(
        driver.buildRestore({
          serverId: spec.serverId,
          restoreId: `rst_${randomBytes(8).toString('hex')}`,
          archive: { url: 'http://127.0.0.1:9/never-fetched', sha256: '0'.repeat(64) },
          recovery: { segments: [], target },
          archivedDatabaseName: spec.databaseName,
          databaseName: spec.databaseName,
          password: spec.password,
          replicationPassword: spec.replicationPassword,
        }),
        /must/,
        JSON.stringify(target),
      );
      assert.equal(await exists(restoreDir), false, 'no restore directory');
      assert.equal(await exists(planted), false);
    }
  });

  it('treats a second create with the same spec as done, keeping the server and its data', async () => {
    const { pgdata } = serverPaths(dataDir, spec.serverId);
    const pidBefore = await postmasterPid(pgdata);
    assert.deepEqual(await driver.create(spec), { host: settings.host, port: spec.port });
    assert.equal(await postmasterPid(pgdata), pidBefore, 'the server was restarted');
    const { rows } = await asApp((client) =>
      client.query<{ body: string }>('SELECT body FROM notes'),
    );
    assert.deepEqual(rows, [{ body: 'kept' }]);
  });

  it('destroys the server: port closed, files gone, and again without complaint', async () => {
    const { serverDir } = serverPaths(dataDir, spec.serverId);
    await driver.destroy(spec.serverId);
    assert.equal(await canConnect(settings.host, spec.port, 1000), false);
    assert.equal(await exists(serverDir), false);
    assert.equal(await driver.state(spec.serverId), 'missing');
    assert.deepEqual(await driver.list(), []);
    await driver.destroy(spec.serverId);
    await assert.rejects(driver.ensureRunning(spec.serverId), /does not exist/);
  });
});
