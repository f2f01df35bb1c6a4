import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BaseBackupSource } from '@pgcloud/postgres';
import { replicationConninfo, startBaseBackup } from '@pgcloud/postgres';
import type { RestoreArchive, RestoreSegment } from '../database-driver.js';

/**
 * What a restore is made from, as backup-service and pitr-worker would give it to the
 * driver: a base backup archive and archived WAL segments behind links. Here the links
 * point at a local HTTP server of the test's (the services' links point at S3).
 */
export class RestoreSources {
  /** Each link's body, and the WAL segment it is, if one. */
  private readonly files = new Map<string, { body: Buffer; segment?: string }>();
  /** Segments whose links answer only after so many milliseconds, or with an error. */
  private readonly slow = new Map<string, number>();
  private readonly failing = new Set<string>();

  private constructor(
    private readonly server: Server,
    private readonly baseUrl: string,
  ) {}

  static async start(): Promise<RestoreSources> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    const sources = new RestoreSources(server, `http://127.0.0.1:${address.port}`);
    server.on('request', (request, response) => {
      const file = sources.files.get(request.url ?? '');
      if (!file) return void response.writeHead(404).end();
      const segment = file.segment ?? '';
      if (sources.failing.has(segment)) return void response.writeHead(500).end();
      setTimeout(
        () => response.writeHead(200, { 'content-length': file.body.length }).end(file.body),
        sources.slow.get(segment) ?? 0,
      );
    });
    return sources;
  }

  /** A base backup of `source` (pg_basebackup as backup-service runs it), behind a link. */
  async baseBackup(pgBinDir: string, source: BaseBackupSource): Promise<RestoreArchive> {
    const backup = await startBaseBackup({ pgBinDir, source });
    const chunks: Buffer[] = [];
    for await (const chunk of backup.archive) chunks.push(chunk as Buffer);
    await backup.finished;
    const body = Buffer.concat(chunks);
    return {
      url: this.put(body),
      sha256: createHash('sha256').update(body).digest('hex'),
    };
  }

  /**
   * The segments a receiver archived, behind links, as a point-in-time restore gets them:
   * each in two pieces, as the archive stores a segment it uploaded while it grew.
   */
  async segments(receiver: WalReceiver): Promise<RestoreSegment[]> {
    const names = (await readdir(receiver.dir)).filter((f) => /^[0-9A-F]{24}(\.partial)?$/.test(f));
    const segments: RestoreSegment[] = [];
    for (const file of names.sort()) {
      const body = await readFile(join(receiver.dir, file));
      const partial = file.endsWith('.partial');
      const name = file.replace('.partial', '');
      const half = Math.floor(body.length / 2);
      segments.push({
        name,
        urls: [this.put(body.subarray(0, half), name), this.put(body.subarray(half), name)],
        partial,
        sizeBytes: partial ? (await stat(join(receiver.dir, file))).size : body.length,
      });
    }
    return segments;
  }

  /** The segment's links answer 500 from now on. */
  fail(segment: string): void {
    this.failing.add(segment);
  }

  /** The segment's links answer again, but only `ms` after they were asked. */
  delay(segment: string, ms: number): void {
    this.failing.delete(segment);
    this.slow.set(segment, ms);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private put(body: Buffer, segment?: string): string {
    const path = `/${randomBytes(8).toString('hex')}`;
    this.files.set(path, { body, ...(segment ? { segment } : {}) });
    return `${this.baseUrl}${path}`;
  }
}

/** pg_receivewal streaming a server's WAL into a folder, flushing every write. */
export class WalReceiver {
  private constructor(
    readonly dir: string,
    private readonly child: ReturnType<typeof spawn>,
    private readonly caFile: string,
  ) {}

  static async start(pgBinDir: string, source: BaseBackupSource): Promise<WalReceiver> {
    const dir = await mkdtemp(join(tmpdir(), 'pgcloud-wal-'));
    const caFile = join(dir, 'ca.crt');
    await writeFile(caFile, source.caPem);
    const conninfo = replicationConninfo(source, caFile);
    const child = spawn(
      join(pgBinDir, 'pg_receivewal'),
      ['--directory', dir, '--synchronous', '--no-loop', `--dbname=${conninfo}`],
      { env: { ...process.env, PGPASSWORD: source.password }, stdio: 'ignore' },
    );
    return new WalReceiver(dir, child, caFile);
  }

  /** Stops it (what it received stays in `dir`, the current segment as `.partial`). */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGINT');
      await once(this.child, 'exit');
    }
    await rm(this.caFile, { force: true });
  }

  async remove(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}
