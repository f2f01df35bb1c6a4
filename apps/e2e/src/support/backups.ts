import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Backup } from '@pgcloud/contracts';
import type { OsUser } from '@pgcloud/postgres';
import { ensureOwnedDir, pgBinDir, resolveOsUser, runAsOsUser, runPgTool } from '@pgcloud/postgres';
import type { ApiClient } from '@pgcloud/testing';
import { freePort } from '@pgcloud/testing';
import { expectData } from './assertions.js';
import { sleep } from './device-flow.js';

/** Polls a backup until its status is one of `statuses`, and answers it. */
export async function waitForBackup(
  api: ApiClient,
  backupsPath: string,
  backupId: string,
  statuses: string[] = ['completed', 'failed'],
  timeoutMs = 120_000,
): Promise<Backup> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const backup = expectData<Backup>(await api.get(`${backupsPath}/${backupId}`), 200);
    if (statuses.includes(backup.status)) return backup;
    if (Date.now() > deadline)
      throw new Error(`backup ${backupId} is still ${backup.status} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * Downloads a URL with a plain HTTP client (no credentials) into a file; answers the
 * response's status, headers and, on 200, the file and its SHA-256.
 */
export async function download(
  url: string,
  dir: string,
): Promise<{ status: number; headers: Headers; file?: string; sha256?: string }> {
  const response = await fetch(url);
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel();
    return { status: response.status, headers: response.headers };
  }
  const file = join(dir, 'backup.tar.zst');
  const hash = createHash('sha256');
  const body = Readable.fromWeb(response.body);
  body.on('data', (chunk: Buffer) => hash.update(chunk));
  await pipeline(body, createWriteStream(file));
  return { status: 200, headers: response.headers, file, sha256: hash.digest('hex') };
}

/** A PostgreSQL server started by hand on a downloaded backup, as a user would. */
export class RestoredByHand {
  private constructor(
    private readonly osUser: OsUser,
    private readonly pgBinDir: string,
    readonly dir: string,
    readonly dataDir: string,
  ) {}

  /** Extracts the archive into a fresh data directory owned by PostgreSQL's OS user. */
  static async extract(archive: string): Promise<RestoredByHand> {
    const osUser = await resolveOsUser('postgres');
    const dir = mkdtempSync(join(tmpdir(), 'pgcloud-restored-'));
    const dataDir = join(dir, 'data');
    await ensureOwnedDir(dir, osUser, 0o755);
    await ensureOwnedDir(dataDir, osUser);
    await runAsOsUser('/bin/tar', ['--zstd', '-xf', archive, '-C', dataDir], { osUser });
    return new RestoredByHand(osUser, pgBinDir(), dir, dataDir);
  }

  /** pg_verifybackup on the extracted directory (it reads backup_manifest there). */
  async verify(): Promise<string> {
    const { stdout } = await runPgTool(this.pgBinDir, 'pg_verifybackup', [this.dataDir], {
      osUser: this.osUser,
    });
    return stdout.trim();
  }

  /** Starts PostgreSQL on it (sockets only, in its own folder) and answers psql's output. */
  async query(database: string, sql: string): Promise<string> {
    const port = await freePort();
    const options = `-c port=${port} -c listen_addresses='' -c unix_socket_directories=${this.dir} -c ssl=off`;
    const pgCtl = (args: string[]) =>
      runPgTool(this.pgBinDir, 'pg_ctl', ['-D', this.dataDir, ...args], { osUser: this.osUser });
    await pgCtl(['-o', options, '-l', join(this.dir, 'server.log'), '-w', '-t', '60', 'start']);
    try {
      const { stdout } = await runPgTool(
        this.pgBinDir,
        'psql',
        ['-h', this.dir, '-p', String(port), '-U', 'postgres', '-d', database, '-XAtc', sql],
        { osUser: this.osUser },
      );
      return stdout.trim();
    } finally {
      await pgCtl(['-m', 'fast', '-w', 'stop']);
    }
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
