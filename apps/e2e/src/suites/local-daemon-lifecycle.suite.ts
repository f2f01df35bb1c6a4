import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { LocalDatabaseDetail } from '@pgcloud/contracts';
import { canConnect, freePort } from '@pgcloud/testing';
import { LocalDaemon, spawnLocalDaemon } from '@pgcloud/devstack';
import { expectData } from '../support/assertions.js';
import { waitUntilClosed } from '../support/databases.js';
import { sql } from '../support/local-daemon.js';

/** Runs a daemon that is expected to refuse to start; answers its exit code and stderr. */
async function refusedStart(
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  const child = spawnLocalDaemon({
    DAEMON_PORT: String(await freePort()),
    DAEMON_PG_PORT: String(await freePort()),
    NO_COLOR: '1',
    ...env,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? -1)));
  return { code, stderr };
}

describe('local daemon: its embedded server', () => {
  it('makes it on first start, keeps it across restarts, and stops it on SIGTERM', async () => {
    const daemon = await LocalDaemon.start('lifecycle');
    try {
      const pgPort = Number(daemon.env['DAEMON_PG_PORT']);
      assert.ok(await canConnect('127.0.0.1', pgPort), 'the embedded server listens');
      const api = await daemon.api();
      const kept = expectData<LocalDatabaseDetail>(
        await api.post('/databases', { name: 'kept' }),
        201,
      );
      await sql(kept.connection.connectionString, 'CREATE TABLE notes (body text)');
      const token = await daemon.token();
      const dataDir = daemon.env['DAEMON_DATA_DIR'] ?? '';
      assert.equal((await stat(join(dataDir, 'login-role.password'))).mode & 0o777, 0o600);
      assert.equal((await stat(join(dataDir, 'server', 'pgdata'))).mode & 0o777, 0o700);

      await daemon.stopProcess();
      await waitUntilClosed(pgPort);

      await daemon.restart();
      assert.equal(await daemon.token(), token);
      const again = expectData<LocalDatabaseDetail>(
        await (await daemon.api()).get('/databases/kept'),
        200,
      );
      assert.equal(again.createdAt, kept.createdAt);
      assert.equal(again.tables, 1);
      assert.deepEqual(again.connection, kept.connection);
    } finally {
      await daemon.stop();
    }
  });

  it('names DAEMON_DATA_DIR when it is too deep for a socket path', async () => {
    const deep = join(tmpdir(), 'pgcloud-deep', 'd'.repeat(90));
    const { code, stderr } = await refusedStart({
      DAEMON_DATA_DIR: deep,
      DAEMON_TOKEN_FILE: join(tmpdir(), `pgcloud-deep-${process.pid}.token`),
    });
    await rm(join(tmpdir(), 'pgcloud-deep'), { recursive: true, force: true });
    await rm(join(tmpdir(), `pgcloud-deep-${process.pid}.token`), { force: true });
    assert.equal(code, 1);
    assert.match(stderr, /local-daemon could not start: DAEMON_DATA_DIR \(.*\) is too deep/);
  });

  it("names DAEMON_DATA_DIR when PostgreSQL's OS user cannot reach it", async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'pgcloud-closed-'));
    try {
      const closed = join(scratch, 'closed');
      await mkdir(closed, { mode: 0o700 });
      await chmod(scratch, 0o755);
      const env = {
        DAEMON_DATA_DIR: join(closed, 'data'),
        DAEMON_TOKEN_FILE: join(scratch, 'token'),
      };
      if (process.getuid?.() === 0) {
        const { code, stderr } = await refusedStart(env);
        assert.equal(code, 1);
        assert.match(stderr, /DAEMON_DATA_DIR \(.*closed\/data\) is out of reach of the OS user/);
      } else {
        // Without root, PostgreSQL runs as ourselves, who reach our own 0700 folder.
        const daemon = await LocalDaemon.start('closed', env);
        await daemon.stop();
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
