/*
 * What the restore Job's integration spec runs against: a base backup of a real server
 * (the local driver's, taken as backup-service takes them), served over HTTP as a
 * pre-signed link would be, the Secret's files, and the program run as a child process.
 * Used by *.int-spec.ts only.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import type { OsUser } from '@pgcloud/postgres';
import {
  ensureCertificateAuthority,
  issueServerCertificate,
  pgBinDir,
  startBaseBackup,
} from '@pgcloud/postgres';
import { freePort } from '@pgcloud/testing';
import pg from 'pg';
import { REPLICATION_ROLE } from '../drivers/database-driver.js';
import type { ServerSpec } from '../drivers/database-driver.js';
import { LocalDriver } from '../drivers/local/local.driver.js';
import type { RestoreInput } from './restore-input.js';

export const binDir = pgBinDir(process.env['PG_BIN_DIR']);
export const osUserName = process.env['PG_OS_USER'] ?? 'postgres';
const MAIN = join(dirname(fileURLToPath(import.meta.url)), 'main.js');

/** The rows the source database holds when its backup is taken. */
export const SOURCE_ROWS = ['1', '2', '3'];

/** A local server with rows in its database, and its base backup as a .tar.zst file. */
export class SourceBackup {
  readonly driver: LocalDriver;
  readonly spec: ServerSpec;
  archiveFile = '';
  sha256 = '';

  constructor(readonly dir: string) {
    this.driver = new LocalDriver({
      pgBinDir: binDir,
      osUser: osUserName,
      dataDir: join(dir, 'driver'),
      host: '127.0.0.1',
      listenAddress: '127.0.0.1',
    });
    this.spec = {
      serverId: `srv_${randomBytes(10).toString('hex')}`,
      port: 0,
      region: 'local',
      databaseName: 'app_db',
      password: randomBytes(24).toString('base64url'),
      replicationPassword: randomBytes(24).toString('base64url'),
      config: { cpu: 1, memory: 1, storage: 10 },
    };
  }

  async make(): Promise<void> {
    this.spec.port = await freePort();
    await this.driver.prepare();
    const endpoint = await this.driver.create(this.spec);
    const caPem = await this.driver.caCertificate();
    const client = new pg.Client({
      ...endpoint,
      user: this.spec.databaseName,
      database: this.spec.databaseName,
      password: this.spec.password,
      ssl: { ca: caPem, rejectUnauthorized: true },
    });
    await client.connect();
    try {
      await client.query('CREATE TABLE t (n int)');
      await client.query(`INSERT INTO t VALUES (${SOURCE_ROWS.join('), (')})`);
    } finally {
      await client.end();
    }
    const backup = await startBaseBackup({
      pgBinDir: binDir,
      source: {
        ...endpoint,
        user: REPLICATION_ROLE,
        password: this.spec.replicationPassword,
        caPem,
      },
    });
    this.archiveFile = join(this.dir, 'base.tar.zst');
    const hash = createHash('sha256');
    backup.archive.on('data', (chunk: Buffer) => hash.update(chunk));
    await Promise.all([
      pipeline(backup.archive, createWriteStream(this.archiveFile)),
      backup.finished,
    ]);
    this.sha256 = hash.digest('hex');
  }

  async remove(): Promise<void> {
    await this.driver.destroy(this.spec.serverId).catch(() => undefined);
  }
}

/** Serves one file at `/backup.tar.zst` on the loopback, as S3 answers a pre-signed GET. */
export async function serveFile(file: string): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    if (new URL(request.url ?? '/', 'http://x').pathname !== '/backup.tar.zst')
      return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  // A query string, as a pre-signed link has: the program must never print it.
  const signature = randomBytes(16).toString('hex');
  return {
    url: `http://127.0.0.1:${address.port}/backup.tar.zst?X-Signature=${signature}`,
    server,
  };
}

/** The Secret the driver makes, as files (mode 0400), with a certificate for `localhost`. */
export async function writeInput(
  inputDir: string,
  input: RestoreInput,
  tlsDir: string,
  osUser: OsUser,
): Promise<string> {
  const ca = await ensureCertificateAuthority(join(tlsDir, 'ca'));
  const certificate = await issueServerCertificate(ca, {
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: [],
    outDir: join(tlsDir, 'server'),
    osUser,
  });
  await mkdir(inputDir, { recursive: true });
  const files = {
    'restore.json': JSON.stringify(input),
    'tls.crt': await readFile(certificate.certPath, 'utf8'),
    'tls.key': await readFile(certificate.keyPath, 'utf8'),
    'ca.crt': ca.pem,
    'replication-password': input.replicationPassword,
  };
  for (const [name, text] of Object.entries(files))
    await writeFile(join(inputDir, name), text, { mode: 0o400 });
  return ca.pem;
}

/** The program running as a child process, with its output kept. */
export interface JobProcess {
  exited: Promise<number | null>;
  /** Whether the process has ended. */
  ended: () => boolean;
  output: () => string;
  kill: (signal: NodeJS.Signals) => void;
}

/** Runs `main.js <command>` as the Job's container runs it: only its own variables. */
export function startJob(command: 'build' | 'serve', env: Record<string, string>): JobProcess {
  const child = spawn(process.execPath, [MAIN, command], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      PG_BIN_DIR: binDir,
      PG_OS_USER: osUserName,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let ended = false;
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      ended = true;
      resolve(code);
    }),
  );
  return { exited, ended: () => ended, output: () => output, kill: (signal) => child.kill(signal) };
}
