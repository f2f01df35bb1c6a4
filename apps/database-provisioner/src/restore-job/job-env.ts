import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgBinDir } from '@pgcloud/postgres';

/** What the restore Job's containers are told by their environment. */
export interface JobEnv {
  /** Writable, empty when the Job starts; the data, its settings and TLS files go here. */
  restoreDir: string;
  /** The restore's Secret, one file per key. */
  inputDir: string;
  binDir: string;
  /** The OS user PostgreSQL runs as when the program runs as root (tests). */
  osUserName: string;
}

/** Where the Job keeps its work under RESTORE_DIR. */
export interface JobPaths {
  dataDir: string;
  /** The server's certificate and key: beside the data, never in it (it is cloned). */
  tlsDir: string;
  certFile: string;
  keyFile: string;
  /** The settings and access rules of the checking and the serving server. */
  confDir: string;
  /** The checking server's socket: under the temp dir, its path short enough for one. */
  socketDir: string;
  walSpoolDir: string;
  logFile: string;
}

/** Reads the variables both commands need; throws naming the one missing. */
export function readJobEnv(env: NodeJS.ProcessEnv): JobEnv {
  return {
    restoreDir: required(env, 'RESTORE_DIR'),
    inputDir: required(env, 'RESTORE_INPUT_DIR'),
    binDir: pgBinDir(env['PG_BIN_DIR'] || undefined),
    osUserName: env['PG_OS_USER'] || 'postgres',
  };
}

/** A variable that must be set (and not empty). */
export function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

export function jobPaths(restoreDir: string): JobPaths {
  const tlsDir = join(restoreDir, 'tls');
  return {
    dataDir: join(restoreDir, 'data'),
    tlsDir,
    certFile: join(tlsDir, 'server.crt'),
    keyFile: join(tlsDir, 'server.key'),
    confDir: join(restoreDir, 'conf'),
    socketDir: join(tmpdir(), `pgcloud-restore-${randomBytes(4).toString('hex')}`),
    walSpoolDir: join(restoreDir, 'wal'),
    logFile: join(restoreDir, 'build.log'),
  };
}
