import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { removeLocksOfZombies } from './postmaster-lock.js';

describe('removeLocksOfZombies', () => {
  let pgdata: string;
  before(async () => {
    pgdata = await mkdtemp(join(tmpdir(), 'pgcloud-lock-'));
  });
  after(async () => {
    await rm(pgdata, { recursive: true, force: true });
  });

  it('keeps the lock of a live process', async () => {
    await writeFile(join(pgdata, 'postmaster.pid'), `${process.pid}\n${pgdata}\n`);
    assert.equal(await removeLocksOfZombies([join(pgdata, 'postmaster.pid')]), 0);
    await access(join(pgdata, 'postmaster.pid'));
  });

  it('leaves a gone process and a missing or garbled lock to PostgreSQL', async () => {
    await writeFile(join(pgdata, 'postmaster.pid'), '999999999\n');
    assert.equal(await removeLocksOfZombies([join(pgdata, 'postmaster.pid')]), 0);
    await writeFile(join(pgdata, 'postmaster.pid'), 'garbage\n');
    assert.equal(await removeLocksOfZombies([join(pgdata, 'postmaster.pid')]), 0);
    await rm(join(pgdata, 'postmaster.pid'));
    assert.equal(await removeLocksOfZombies([join(pgdata, 'postmaster.pid')]), 0);
  });

  it('removes a lock whose process is a zombie', async () => {
    // The child exits at once, and its parent (perl, which does not reap unless asked) sleeps
    // on: a zombie for as long as the parent lives, however slowly a loaded machine runs them.
    const parent = spawn(
      'perl',
      ['-e', '$| = 1; my $pid = fork; exit 0 unless $pid; print "$pid\\n"; sleep 60'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      const [chunk] = (await once(parent.stdout, 'data')) as [Buffer];
      const zombie = Number(chunk.toString().trim());
      await waitForState(zombie, 'Z');
      await writeFile(join(pgdata, 'postmaster.pid'), `${zombie}\n`);
      await writeFile(join(pgdata, 'socket.lock'), `${process.pid}\n`);
      const locks = [join(pgdata, 'postmaster.pid'), join(pgdata, 'socket.lock')];
      assert.equal(await removeLocksOfZombies(locks), 1);
      await assert.rejects(access(join(pgdata, 'postmaster.pid')));
      await access(join(pgdata, 'socket.lock'));
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

async function waitForState(pid: number, state: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let stat = '';
  while (Date.now() < deadline) {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '(gone)');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith(state)) return;
    await delay(50);
  }
  assert.fail(`process ${pid} is not in state ${state}: ${stat}`);
}
