import type { OsUser, PgTools, SocketAddress } from '@pgcloud/postgres';
import {
  answers,
  assertReachable,
  assertSocketPathFits,
  chownFile,
  ensureCluster,
  ensureOwnedDir,
  quoteIdent,
  quoteLiteral,
  renderConf,
  renderHbaRules,
  resolveOsUser,
  scramSha256Verifier,
  SERVER_CONF_FILE,
  startCluster,
  stopCluster,
  CATALOG_SEARCH_PATH,
  SUPERUSER,
  withSuperuser,
} from '@pgcloud/postgres';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { ensureSecretFile } from '@pgcloud/config';
import type { ServerAccess } from './server-access.js';

/** What the embedded server is made from (DAEMON_DATA_DIR, DAEMON_PG_PORT, PG_*). */
export interface EmbeddedSettings {
  dataDir: string;
  port: number;
  pgBinDir: string;
  osUserName: string;
}

/** Where the embedded server keeps its files under DAEMON_DATA_DIR. */
export interface EmbeddedPaths {
  /** Owned by PostgreSQL's OS user, 0700: the cluster, its socket and its log. */
  serverDir: string;
  pgdata: string;
  socketDir: string;
  logFile: string;
  /** The login role's password, the daemon's alone (0600). */
  passwordFile: string;
}

/** The role clients log in as; it owns the databases the daemon creates. */
export const LOGIN_ROLE = 'pgcloud';
const LISTEN_ADDRESS = '127.0.0.1';
const HEADER = "Written by pgcloud's local daemon at each start.";

/** The embedded server's files under `dataDir`. */
export function embeddedPaths(dataDir: string): EmbeddedPaths {
  const serverDir = join(dataDir, 'server');
  return {
    serverDir,
    pgdata: join(serverDir, 'pgdata'),
    socketDir: join(serverDir, 'socket'),
    logFile: join(serverDir, 'postgresql.log'),
    passwordFile: join(dataDir, 'login-role.password'),
  };
}

/**
 * The default server: a cluster of the daemon's own under DAEMON_DATA_DIR, made with
 * initdb on first start, started with pg_ctl as PostgreSQL's OS user on 127.0.0.1, and
 * stopped by close(). The daemon works over its socket as the superuser; clients get
 * the login role `pgcloud` (no superuser), whose password is kept beside the cluster.
 */
export async function openEmbeddedServer(settings: EmbeddedSettings): Promise<ServerAccess> {
  const paths = embeddedPaths(settings.dataDir);
  const osUser = await resolveOsUser(settings.osUserName);
  const tools: PgTools = { binDir: settings.pgBinDir, osUser };
  const address: SocketAddress = { socketDir: paths.socketDir, port: settings.port };
  await prepareDirectories(settings.dataDir, paths, address, osUser);
  await ensureCluster(paths.pgdata, tools);
  await writeServerFiles(paths.pgdata, address, osUser);
  const cluster = { pgdata: paths.pgdata, logFile: paths.logFile, address };
  if (await answers(address)) await reloadSettings(address);
  else await startCluster(cluster, tools);
  const password = await ensureSecretFile(paths.passwordFile, {
    prefix: '',
    setting: 'DAEMON_DATA_DIR',
  });
  await ensureLoginRole(address, password);
  return {
    session: (database: string): pg.ClientConfig => ({
      host: address.socketDir,
      port: address.port,
      user: SUPERUSER,
      database,
      options: CATALOG_SEARCH_PATH,
    }),
    maintenanceDatabase: 'postgres',
    login: { host: LISTEN_ADDRESS, port: settings.port, user: LOGIN_ROLE, password },
    owner: LOGIN_ROLE,
    description: `the embedded server in ${paths.pgdata} on ${LISTEN_ADDRESS}:${settings.port}`,
    close: () => stopCluster(cluster, tools),
  };
}

/**
 * DAEMON_DATA_DIR is made if missing (0711 when PostgreSQL runs as another user, so it
 * can pass through, else 0700) and must be reachable by that user all the way down:
 * checked here, naming the setting, rather than failing later with a permission error.
 */
async function prepareDirectories(
  dataDir: string,
  paths: EmbeddedPaths,
  address: SocketAddress,
  osUser: OsUser,
): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: osUser.switchUser ? 0o711 : 0o700 });
  await assertReachable(dataDir, osUser, 'DAEMON_DATA_DIR');
  assertSocketPathFits(address.socketDir, address.port, {
    name: 'DAEMON_DATA_DIR',
    value: dataDir,
  });
  await ensureOwnedDir(paths.serverDir, osUser);
  await ensureOwnedDir(paths.socketDir, osUser);
}

/**
 * The server's own settings and pg_hba.conf, written at each start so a changed
 * DAEMON_PG_PORT takes effect. The socket is trusted (its directory is 0700); TCP, on
 * 127.0.0.1 only, takes scram-sha-256 passwords.
 */
async function writeServerFiles(
  pgdata: string,
  address: SocketAddress,
  osUser: OsUser,
): Promise<void> {
  const settings = {
    port: address.port,
    listen_addresses: LISTEN_ADDRESS,
    unix_socket_directories: address.socketDir,
    unix_socket_permissions: '0700',
    password_encryption: 'scram-sha-256',
    // pg_ctl -l sends the server's stderr to the log file beside the cluster.
    logging_collector: 'off',
    log_destination: 'stderr',
  };
  const hba = [
    ['local', 'all', 'all', '', 'trust'],
    ['host', 'all', 'all', `${LISTEN_ADDRESS}/32`, 'scram-sha-256'],
  ];
  const files = {
    [SERVER_CONF_FILE]: renderConf(settings, HEADER),
    'pg_hba.conf': renderHbaRules(hba, HEADER),
  };
  for (const [name, text] of Object.entries(files)) {
    const file = join(pgdata, name);
    await writeFile(file, text, { mode: 0o600 });
    await chownFile(file, osUser, 0o600);
  }
}

async function reloadSettings(address: SocketAddress): Promise<void> {
  await withSuperuser(address, 5000, async (client) => {
    await client.query('SELECT pg_reload_conf()');
  });
}

/**
 * Makes the login role, or sets its password again (the file is the truth). The
 * password reaches the server only as a SCRAM verifier, so it is in no server log.
 */
async function ensureLoginRole(address: SocketAddress, password: string): Promise<void> {
  await withSuperuser(address, 10_000, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [LOGIN_ROLE]);
    const verb = found.rowCount === 0 ? 'CREATE' : 'ALTER';
    const verifier = quoteLiteral(scramSha256Verifier(password));
    await client.query(
      `${verb} ROLE ${quoteIdent(LOGIN_ROLE)} LOGIN CREATEDB NOSUPERUSER PASSWORD ${verifier}`,
    );
  });
}
