import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { OsUser } from './os-user.js';
import { assertReachable, CommandError, resolveOsUser, runAsOsUser, runPgTool } from './os-user.js';

const pgBinDir =
  process.env.PG_BIN_DIR ?? execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();

describe('running PostgreSQL tools as the OS user', () => {
  let osUser: OsUser;
  let scratch: string;

  before(async () => {
    osUser = await resolveOsUser(process.env.PG_OS_USER ?? 'postgres');
    scratch = await mkdtemp(join(tmpdir(), 'pgcloud-os-user-'));
    await chmod(scratch, 0o755);
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('switches to the unprivileged user only when we are root', () => {
    assert.equal(osUser.switchUser, process.getuid?.() === 0);
    assert.notEqual(osUser.uid, 0);
  });

  it('runs a tool as that user', async () => {
    const { stdout } = await runPgTool(pgBinDir, 'pg_ctl', ['--version'], { osUser });
    assert.match(stdout, /PostgreSQL\) \d+/);
  });

  it('fails with the tool, its exit code and the end of its stderr', async () => {
    const missing = join(scratch, 'no-cluster');
    await assert.rejects(
      runPgTool(pgBinDir, 'pg_ctl', ['-D', missing, 'status'], { osUser }),
      (err: unknown) =>
        err instanceof CommandError &&
        err.exitCode !== 0 &&
        /^pg_ctl exited with code \d+: .*no-cluster/s.test(err.message),
    );
  });

  it('kills a tool whose signal is aborted and fails with the reason', async () => {
    const controller = new AbortController();
    const sleeping = runAsOsUser('sleep', ['600'], { osUser, signal: controller.signal });
    controller.abort(new Error('the job lease was lost'));
    await assert.rejects(sleeping, /the job lease was lost/);
    await assert.rejects(
      runAsOsUser('true', [], { osUser, signal: controller.signal }),
      /the job lease was lost/,
      'not started once aborted',
    );
  });

  it('tells apart a directory the user reaches from one it does not, naming the setting', async () => {
    await assertReachable(scratch, osUser, 'DATA_DIR');
    const closed = join(scratch, 'closed');
    await mkdir(join(closed, 'data'), { recursive: true });
    await chmod(closed, 0o700);
    const check = assertReachable(join(closed, 'data'), osUser, 'DATA_DIR');
    // Only root can own a directory another user cannot enter while we still can.
    if (osUser.switchUser)
      await assert.rejects(check, /DATA_DIR .* is out of reach of the OS user/);
    else await check;
  });

  it('refuses an OS user that does not exist', async () => {
    if (!osUser.switchUser) return; // without root, no user is looked up at all
    await assert.rejects(resolveOsUser('no_such_user_pgcloud'), /does not exist on this machine/);
  });
});
