import type { OsUser } from '@pgcloud/postgres';
import { WAL_SEGMENT_BYTES, segmentName } from '@pgcloud/postgres';
import { chown, mkdir, open, readdir, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * The local directories receivers write into, one per replica process (several may share
 * a host and DATA_DIR) and database: `<spool>/<host>-<pid>/<database_id>`.
 */
export class Spool {
  readonly processDir: string;

  constructor(
    private readonly root: string,
    private readonly osUser: OsUser,
  ) {
    this.processDir = join(root, `${hostname()}-${process.pid}`);
  }

  /** Removes what replicas of this host that are no longer alive left behind. */
  async removeDeadProcesses(): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: 0o755 });
    const prefix = `${hostname()}-`;
    for (const entry of await readdir(this.root)) {
      if (!entry.startsWith(prefix)) continue;
      const pid = Number(entry.slice(prefix.length));
      if (Number.isInteger(pid) && pid !== process.pid && !isAlive(pid))
        await rm(join(this.root, entry), { recursive: true, force: true });
    }
  }

  async removeAll(): Promise<void> {
    await rm(this.processDir, { recursive: true, force: true });
  }

  /**
   * A fresh directory for a database's receiver, seeded with an empty `.partial` of the
   * segment to stream from (pg_receivewal starts at the segment of the newest file it
   * finds), and the CA's certificate beside it; both the OS user's.
   */
  async prepare(
    databaseId: string,
    start: { timeline: number; segno: bigint },
    caPem: string,
  ): Promise<{ directory: string; caFile: string }> {
    const base = join(this.processDir, databaseId);
    const directory = join(base, 'wal');
    await rm(base, { recursive: true, force: true });
    await mkdir(this.processDir, { recursive: true, mode: 0o755 });
    await this.ownDir(base);
    await this.ownDir(directory);
    const caFile = join(base, 'ca.pem');
    await writeFile(caFile, caPem, { mode: 0o600 });
    const seed = join(directory, `${segmentName(start.timeline, start.segno)}.partial`);
    const handle = await open(seed, 'w', 0o600);
    try {
      await handle.truncate(WAL_SEGMENT_BYTES);
    } finally {
      await handle.close();
    }
    for (const file of [caFile, seed]) await this.own(file);
    return { directory, caFile };
  }

  async remove(databaseId: string): Promise<void> {
    await rm(join(this.processDir, databaseId), { recursive: true, force: true });
  }

  private async ownDir(path: string): Promise<void> {
    await mkdir(path, { mode: 0o700 });
    await this.own(path);
  }

  private async own(path: string): Promise<void> {
    if (this.osUser.switchUser) await chown(path, this.osUser.uid, this.osUser.gid);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
