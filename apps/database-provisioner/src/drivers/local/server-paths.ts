import { assertSocketPathFits as assertSocketFits } from '@pgcloud/postgres';
import { join } from 'node:path';

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
  };
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
