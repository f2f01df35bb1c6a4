import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { spawn } from 'node:child_process';
import { access, appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureCluster } from './local-cluster.js';
import type { OsUser } from './os-user.js';
import { chownFile, ensureOwnedDir, resolveOsUser } from './os-user.js';
import { readPostmasterStatus, runPgCtl } from './pg-ctl.js';
import { startPostmaster } from './postmaster.js';
import { answers, withSuperuser } from './socket-session.js';

const pgBinDir =
  process.env.PG_BIN_DIR ?? execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();

describe('a server started without a shell, stopped and promoted by pg_ctl', () => {
  let osUser: OsUser;
  let scratch: string;
  let pgdata: string;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const address = () => ({ socketDir: scratch, port });
  const run = (action: 'stop' | 'promote', args: string[] = []) =>
    runPgCtl(pgBinDir, pgdata, action, args, { osUser });
  const start = (settings: Record<string, string> = {}) =>
    startPostmaster(pgdata, {
      binDir: pgBinDir,
      osUser,
      logFile: join(scratch, 'server.log'),
      settings: {
        port,
        listen_addresses: '',
        unix_socket_directories: scratch,
        ...settings,
      },
      timeoutMs: 20_000,
    });

  before(async () => {
    osUser = await resolveOsUser(process.env.PG_OS_USER ?? 'postgres');
    scratch = await mkdtemp(join(tmpdir(), 'pgcloud-pg-ctl-'));
    await ensureOwnedDir(scratch, osUser, 0o755);
    pgdata = join(scratch, 'data');
    await ensureCluster(pgdata, { binDir: pgBinDir, osUser });
    // ensureCluster's postgresql.conf includes the server's own settings file.
    await writeFile(join(pgdata, 'pgcloud.conf'), '');
    await chownFile(join(pgdata, 'pgcloud.conf'), osUser);
  });
  after(async () => {
    await run('stop', ['-m', 'immediate']).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  });

  it('starts a server that then accepts connections, and stops it with nothing left', async () => {
    await start();
    assert.equal((await readPostmasterStatus(pgdata))?.status, 'ready');
    assert.equal(await answers(address()), true);
    await run('stop', ['-m', 'fast']);
    assert.equal(await readPostmasterStatus(pgdata), undefined);
    assert.equal(await answers(address()), false);
  });

  it('runs postgres itself, from an argument vector: a value is never read as shell', async () => {
    const planted = join(scratch, 'planted');
    // Under 64 bytes: longer names are cut short.
    const name = `$(touch ${planted})';\`id\``;
    await start({ cluster_name: name });
    try {
      const status = await readPostmasterStatus(pgdata);
      assert.ok(status);
      // Its parent is this process: no /bin/sh (nor pg_ctl) in between.
      const stat = await readFile(`/proc/${status.pid}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      assert.equal(parent, process.pid);
      const argv = (await readFile(`/proc/${status.pid}/cmdline`, 'utf8')).split('\0');
      assert.ok(argv.includes(`cluster_name=${name}`), argv.join(' '));
      const shown = await withSuperuser(address(), 5000, async (client) => {
        const { rows } = await client.query<{ v: string }>(
          "SELECT current_setting('cluster_name') AS v",
        );
        return rows[0]?.v;
      });
      assert.equal(shown, name);
      await assert.rejects(access(planted), /ENOENT/);
    } finally {
      await run('stop', ['-m', 'fast']);
    }
  });

  it('fails when there is nothing to stop, or the server cannot start', async () => {
    await assert.rejects(run('stop', ['-m', 'fast']), /pg_ctl exited/);
    await appendFile(join(pgdata, 'pgcloud.conf'), 'no_such_setting = 1\n');
    await assert.rejects(start(), /postgres exited with code 1 while starting/);
    await writeFile(join(pgdata, 'pgcloud.conf'), '');
    await assert.rejects(start({ 'bad name': '1' }), /not a setting name/);
  });

  it('never takes a postmaster.pid left by another postmaster for the one it starts', async () => {
    await start();
    const pidFile = join(pgdata, 'postmaster.pid');
    const lines = (await readFile(pidFile, 'utf8')).split('\n');
    await run('stop', ['-m', 'fast']);
    // As a postmaster killed a moment ago leaves it: ready, just started, its pid still
    // taken (a zombie; here a process of the same user), so the new one refuses to start.
    const holder = spawn('sleep', ['30'], {
      ...(osUser.switchUser ? { uid: osUser.uid, gid: osUser.gid } : {}),
    });
    try {
      lines[0] = String(holder.pid);
      await writeFile(pidFile, lines.join('\n'));
      await chownFile(pidFile, osUser);
      await assert.rejects(start(), /postgres exited with code 1 while starting/);
    } finally {
      holder.kill();
      await rm(pidFile, { force: true });
    }
  });

  it('promotes a hot standby to a server out of recovery, and refuses a second promotion', async () => {
    await writeFile(join(pgdata, 'standby.signal'), '');
    await chownFile(join(pgdata, 'standby.signal'), osUser);
    await start();
    const inRecovery = () =>
      withSuperuser(address(), 5000, async (client) => {
        const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
        return rows[0]?.r;
      });
    assert.equal(await inRecovery(), true);
    await run('promote');
    assert.equal(await inRecovery(), false);
    await assert.rejects(run('promote'), /pg_ctl exited/);
    await run('stop', ['-m', 'fast']);
  });
});
