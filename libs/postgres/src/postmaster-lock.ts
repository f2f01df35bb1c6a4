import { readFile, rm } from 'node:fs/promises';

/**
 * Removes each PostgreSQL lock file (`postmaster.pid`, `.s.PGSQL.<port>.lock`) whose pid
 * is a zombie. A killed postmaster is re-parented to PID 1, and an init that does not
 * reap promptly (a container's own process, this machine's init) leaves it a zombie for
 * seconds or for ever; its pid still "exists", so a new postmaster refuses to start. A
 * zombie has exited for good, so its locks are stale; PostgreSQL's own check of the
 * shared memory still guards against children that live on. Without /proc, nothing.
 */
export async function removeLocksOfZombies(lockFiles: readonly string[]): Promise<number> {
  let removed = 0;
  for (const lockFile of lockFiles) {
    const pid = Number((await readFile(lockFile, 'utf8').catch(() => '')).split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !(await isZombie(pid))) continue;
    await rm(lockFile, { force: true });
    removed += 1;
  }
  return removed;
}

async function isZombie(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // The state follows the command name, which is in parentheses and may hold spaces.
  const end = stat.lastIndexOf(')');
  return end >= 0 && stat.slice(end + 2, end + 3) === 'Z';
}
