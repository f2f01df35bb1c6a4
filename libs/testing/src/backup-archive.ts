import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { OsUser, SocketAddress } from '@pgcloud/postgres';
import { ensureOwnedDir, pgBinDir, resolveOsUser, runAsOsUser, runPgTool } from '@pgcloud/postgres';
import { freePort } from './free-port.js';

/**
 * Downloads a URL with a plain HTTP client (no credentials) into `dir/backup.tar.zst`;
 * answers the response's status, headers and, on 200, the file and its SHA-256.
 */
export async function downloadArchive(
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

/**
 * A PostgreSQL server started by hand on a downloaded backup, as a user would: the
 * archive extracted by PostgreSQL's OS user, the server on sockets only, in its own folder.
 */
export class RestoredByHand {
  private port: number | undefined;

  private constructor(
    private readonly osUser: OsUser,
    private readonly binDir: string,
    readonly dir: string,
    readonly dataDir: string,
  ) {}

  /** Extracts the archive into a fresh data directory under `parent` (the temp folder). */
  static async extract(archive: string, parent = tmpdir()): Promise<RestoredByHand> {
    const osUser = await resolveOsUser(process.env['PG_OS_USER'] ?? 'postgres');
    const dir = mkdtempSync(join(parent, 'pgcloud-restored-'));
    const dataDir = join(dir, 'data');
    await ensureOwnedDir(dir, osUser, 0o755);
    await ensureOwnedDir(dataDir, osUser);
    await runAsOsUser('/bin/tar', ['--zstd', '-xf', archive, '-C', dataDir], { osUser });
    return new RestoredByHand(osUser, pgBinDir(), dir, dataDir);
  }

  /** pg_verifybackup on the extracted directory (it reads backup_manifest there). */
  async verify(): Promise<string> {
    const { stdout } = await runPgTool(this.binDir, 'pg_verifybackup', [this.dataDir], {
      osUser: this.osUser,
    });
    return stdout.trim();
  }

  /** pg_ctl start, until the server accepts connections (crash recovery included). */
  async start(): Promise<void> {
    const port = await freePort();
    const options = `-c port=${port} -c listen_addresses='' -c unix_socket_directories=${this.dir} -c ssl=off`;
    const log = join(this.dir, 'server.log');
    await this.pgCtl(['-o', options, '-l', log, '-w', '-t', '600', 'start']);
    this.port = port;
  }

  /** Where the started server listens: its folder's socket. */
  get address(): SocketAddress {
    if (this.port === undefined) throw new Error('start the server first');
    return { socketDir: this.dir, port: this.port };
  }

  /** psql as the superuser on the started server; answers its unaligned output. */
  async query(database: string, sql: string): Promise<string> {
    if (this.port === undefined) throw new Error('start the server first');
    const args = ['-h', this.dir, '-p', String(this.port), '-U', 'postgres', '-d', database];
    const { stdout } = await runPgTool(this.binDir, 'psql', [...args, '-XAtc', sql], {
      osUser: this.osUser,
    });
    return stdout.trim();
  }

  /** Stops the server (fast: it is thrown away) and removes every file. */
  async remove(): Promise<void> {
    if (this.port !== undefined) await this.pgCtl(['-m', 'immediate', '-w', 'stop']);
    this.port = undefined;
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async pgCtl(args: string[]): Promise<void> {
    await runPgTool(this.binDir, 'pg_ctl', ['-D', this.dataDir, ...args], { osUser: this.osUser });
  }
}
