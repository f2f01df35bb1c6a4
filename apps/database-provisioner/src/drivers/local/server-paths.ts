import { assertSocketPathFits as assertSocketFits } from '@pgcloud/postgres';
import { join } from 'node:path';
import type { JobPaths } from '../../restore-job/job-env.js';
import { jobPaths } from '../../restore-job/job-env.js';

/** Where the local driver keeps things under DATA_DIR. */
export interface DriverPaths {
  /** The deployment CA: `ca.key` (ours alone) and `ca.pem`. */
  caDir: string;
  /** Owned by the OS user; holds the template and the servers. */
  localDir: string;
  /** The initdb result every server is copied from. */
  templateDir: string;
  serversDir: string;
  /** Servers without a record, set aside until their grace period ends. */
  quarantineDir: string;
  /** Restore drills' scratch servers, one directory each, gone once the drill ends. */
  drillsDir: string;
}

/** Where one server's files live; the whole directory goes when the server does. */
export interface ServerPaths {
  serverDir: string;
  pgdata: string;
  /** The copy of the template being prepared; renamed to `pgdata` once complete. */
  pgdataPartial: string;
  socketDir: string;
  tlsDir: string;
  certFile: string;
  keyFile: string;
  logFile: string;
}

const SERVER_ID = /^[A-Za-z0-9_-]{1,63}$/;

/** The driver's directories under `dataDir`. */
export function driverPaths(dataDir: string): DriverPaths {
  const localDir = join(dataDir, 'local');
  return {
    caDir: join(dataDir, 'ca'),
    localDir,
    templateDir: join(localDir, 'template'),
    serversDir: join(localDir, 'servers'),
    quarantineDir: join(localDir, 'quarantine'),
    drillsDir: join(localDir, 'drills'),
  };
}

const DRILL_ID = /^drl_[0-9a-z]{20}$/;

/**
 * A drill's scratch server's files, laid out as a restore Job's (restore-job/job-env.ts),
 * its socket inside; refuses an id that could step out of the drills directory.
 */
export function drillPaths(dataDir: string, drillId: string): JobPaths & { drillDir: string } {
  if (!DRILL_ID.test(drillId)) throw new Error(`not a drill id: '${drillId}'`);
  const drillDir = join(driverPaths(dataDir).drillsDir, drillId);
  return { ...jobPaths(drillDir), socketDir: join(drillDir, 'socket'), drillDir };
}

/** One server's files; refuses an id that could step out of the servers directory. */
export function serverPaths(dataDir: string, serverId: string): ServerPaths {
  if (!SERVER_ID.test(serverId)) throw new Error(`not a server id: '${serverId}'`);
  const serverDir = join(driverPaths(dataDir).serversDir, serverId);
  const tlsDir = join(serverDir, 'tls');
  return {
    serverDir,
    pgdata: join(serverDir, 'pgdata'),
    pgdataPartial: join(serverDir, 'pgdata.partial'),
    socketDir: join(serverDir, 'socket'),
    tlsDir,
    certFile: join(tlsDir, 'server.crt'),
    keyFile: join(tlsDir, 'server.key'),
    logFile: join(serverDir, 'postgresql.log'),
  };
}

/**
 * Throws when a server's socket path would pass the kernel's limit, naming DATA_DIR: a
 * deep checkout makes PostgreSQL fail at start with a less helpful message.
 */
export function assertSocketPathFits(dataDir: string, serverId: string, port: number): void {
  const { socketDir } = serverPaths(dataDir, serverId);
  assertSocketFits(socketDir, port, { name: 'DATA_DIR', value: dataDir });
}
