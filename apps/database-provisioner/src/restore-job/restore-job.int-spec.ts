import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { OsUser } from '@pgcloud/postgres';
import {
  chownFile,
  ensureOwnedDir,
  formatConninfo,
  resolveOsUser,
  runPgTool,
  startPostmaster,
} from '@pgcloud/postgres';
import { canConnect, freePort } from '@pgcloud/testing';
import pg from 'pg';
import { REPLICATION_ROLE } from '../drivers/database-driver.js';
import type { JobProcess } from './restore-job.int-fixtures.js';
import {
  binDir,
  osUserName,
  serveFile,
  SourceBackup,
  SOURCE_ROWS,
  startJob,
  writeInput,
} from './restore-job.int-fixtures.js';
import type { RestoreInput } from './restore-input.js';

// In the temp folder: PostgreSQL's OS user reaches it and the socket paths stay short.
const testsDir = join(tmpdir(), 'pgcloud-test-restore-job');
const dir = join(testsDir, randomBytes(4).toString('hex'));

describe('the restore Job program against real PostgreSQL', () => {
  const source = new SourceBackup(dir);
  let http: Server;
  let input: RestoreInput;
  let osUser: OsUser;
  let caPem: string;
  const inputDir = join(dir, 'input');
  const restoreDir = join(dir, 'restore');
  const outcomePath = join(dir, 'termination-log');
  let serving: JobProcess | undefined;

  const secrets = () => [
    input.archive.url,
    input.password,
    input.replicationPassword,
    source.spec.password,
  ];
  const assertNoSecrets = (text: string) => {
    for (const secret of secrets()) assert.ok(!text.includes(secret), 'a secret was printed');
    assert.ok(!text.includes('X-Signature'), 'the pre-signed link was printed');
  };

  before(async () => {
    await mkdir(dir, { recursive: true });
    osUser = await resolveOsUser(osUserName);
    await source.make();
    const served = await serveFile(source.archiveFile);
    http = served.server;
    input = {
      restoreId: `rstr_${randomBytes(10).toString('hex')}`,
      archive: { url: served.url, sha256: source.sha256 },
      archivedDatabaseName: source.spec.databaseName,
      databaseName: 'restored_db',
      password: randomBytes(24).toString('base64url'),
      replicationPassword: randomBytes(24).toString('base64url'),
    };
    caPem = await writeInput(inputDir, input, join(dir, 'tls'), osUser);
    await mkdir(restoreDir);
  });

  after(async () => {
    serving?.kill('SIGKILL');
    await serving?.exited;
    http?.close();
    await source.remove();
    await rm(dir, { recursive: true, force: true });
    await rmdir(testsDir).catch(() => undefined); // only when no other run still uses it
  });

  it('builds the restored data, checks it, and leaves nothing of pgcloud in it', async () => {
    const env = { RESTORE_DIR: restoreDir, RESTORE_INPUT_DIR: inputDir };
    const build = startJob('build', { ...env, RESTORE_OUTCOME_PATH: outcomePath });
    const code = await build.exited;
    assert.equal(code, 0, build.output());
    const line = await readFile(outcomePath, 'utf8');
    assert.ok(Buffer.byteLength(line) <= 4096);
    const outcome = JSON.parse(line) as {
      walFilesApplied: number;
      stepSeconds: Record<string, number>;
    };
    assert.ok(outcome.walFilesApplied >= 1, line);
    assert.deepEqual(Object.keys(outcome.stepSeconds).sort(), ['check', 'download', 'recover']);
    assertNoSecrets(build.output());
    const dataDir = join(restoreDir, 'data');
    const files = await readdir(dataDir);
    for (const name of files) assert.doesNotMatch(name, /^pgcloud|\.signal$|\.(crt|key)$/);
    const autoConf = await readFile(join(dataDir, 'postgresql.auto.conf'), 'utf8');
    assert.deepEqual(
      autoConf.split('\n').filter((l) => l && !l.startsWith('#')),
      [],
    );
    const conf = await readFile(join(dataDir, 'postgresql.conf'), 'utf8');
    assert.doesNotMatch(conf, /include|pgcloud/);
  });

  it('serves it for a pg_basebackup over TLS, to the replication role only, until SIGTERM', async () => {
    const port = await freePort();
    serving = startJob('serve', {
      RESTORE_DIR: restoreDir,
      RESTORE_INPUT_DIR: inputDir,
      RESTORE_PORT: String(port),
    });
    const deadline = Date.now() + 30_000;
    while (!(await canConnect('127.0.0.1', port, 500))) {
      const gaveUp = serving.ended() || Date.now() > deadline;
      assert.ok(!gaveUp, `serve did not listen: ${serving.output()}`);
      await delay(100);
    }
    // The login role has no access over the network: only the replication role has.
    assert.equal(await loginRefusal(port), '28000');

    const clone = await cloneFrom(port);
    assert.equal(
      await clone.query("SELECT string_agg(n::text, ',' ORDER BY n) FROM t"),
      SOURCE_ROWS.join(','),
    );
    await clone.stop();

    serving.kill('SIGTERM');
    assert.equal(await serving.exited, 0, serving.output());
    serving = undefined;
  });

  it('fails with corrupt: true when the archive is not the one named, printing no secret', async () => {
    const badInput = join(dir, 'input-bad');
    await mkdir(badInput);
    for (const name of await readdir(inputDir))
      await writeFile(join(badInput, name), await readFile(join(inputDir, name)), { mode: 0o400 });
    const wrong = { ...input, archive: { ...input.archive, sha256: '0'.repeat(64) } };
    await writeFile(join(badInput, 'restore.json'), JSON.stringify(wrong));
    const badRestore = join(dir, 'restore-bad');
    await mkdir(badRestore);
    const badOutcome = join(dir, 'termination-log-bad');
    const build = startJob('build', {
      RESTORE_DIR: badRestore,
      RESTORE_INPUT_DIR: badInput,
      RESTORE_OUTCOME_PATH: badOutcome,
    });
    assert.equal(await build.exited, 1);
    const line = await readFile(badOutcome, 'utf8');
    const outcome = JSON.parse(line) as { error: string; corrupt: boolean };
    assert.equal(outcome.corrupt, true);
    assert.match(outcome.error, /SHA-256/);
    assertNoSecrets(line);
    assertNoSecrets(build.output());
  });

  /** The SQLSTATE a TLS login as the database's own role gets, once the server is up. */
  async function loginRefusal(port: number): Promise<string | undefined> {
    for (;;) {
      const client = new pg.Client({
        host: 'localhost',
        port,
        user: input.databaseName,
        database: input.databaseName,
        password: input.password,
        ssl: { ca: caPem, rejectUnauthorized: true },
      });
      client.on('error', () => undefined);
      const code = await client.connect().then(
        () => 'accepted',
        (err: { code?: string }) => err.code,
      );
      await client.end().catch(() => undefined);
      if (code !== '57P03') return code; // not "starting up"
      await delay(100);
    }
  }

  /**
   * pg_basebackup from the serving server as a new Cluster's bootstrap does it (stream,
   * verify-full on `localhost`), then a server started on the copy, on its socket only.
   */
  async function cloneFrom(port: number) {
    const cloneDir = join(dir, 'clone');
    const dataDir = join(cloneDir, 'data');
    await ensureOwnedDir(cloneDir, osUser);
    const caFile = join(cloneDir, 'ca.crt');
    await writeFile(caFile, caPem);
    await chownFile(caFile, osUser);
    const conninfo = formatConninfo([
      ['host', 'localhost'],
      ['port', String(port)],
      ['user', REPLICATION_ROLE],
      ['sslmode', 'verify-full'],
      ['sslrootcert', caFile],
    ]);
    const run = (tool: string, args: string[], env: Record<string, string> = {}) =>
      runPgTool(binDir, tool, args, { osUser, env });
    await run('pg_basebackup', ['-D', dataDir, '--wal-method=stream', '-d', conninfo], {
      PGPASSWORD: input.replicationPassword,
    });
    const copied = await readdir(dataDir);
    for (const name of copied) assert.doesNotMatch(name, /^pgcloud|\.signal$/);
    await writeFile(join(dataDir, 'pg_hba.conf'), 'local all all trust\n');
    await chownFile(join(dataDir, 'pg_hba.conf'), osUser);
    const clonePort = await freePort();
    await startPostmaster(dataDir, {
      binDir,
      osUser,
      logFile: join(cloneDir, 'log'),
      settings: { port: clonePort, listen_addresses: '', unix_socket_directories: cloneDir },
    });
    return {
      query: async (sql: string) => {
        const args = ['-h', cloneDir, '-p', String(clonePort), '-U', 'postgres'];
        const { stdout } = await run('psql', [...args, '-d', input.databaseName, '-XAtc', sql]);
        return stdout.trim();
      },
      stop: () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']),
    };
  }
});
