import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { OsUser, SettingValue } from '@pgcloud/postgres';
import { ensureOwnedDir, renderConf, renderHbaRules } from '@pgcloud/postgres';
import { REPLICATION_ROLE } from '../drivers/database-driver.js';
import { autoConf, writeOwned } from '../drivers/restore-build/restored-data.js';
import type { JobPaths } from './job-env.js';

const HEADER = "Written by pgcloud's restore job for one server's run.";

/** Which server of the Job the settings are for. */
export type JobServer = 'check' | 'serve';

/** The files a server is pointed at (`-c config_file=... -c hba_file=...`). */
export interface ServerConfigFiles {
  configFile: string;
  hbaFile: string;
}

/**
 * The Job's servers read their settings and access rules from RESTORE_DIR/conf, never
 * from the data directory: the archive's postgresql.conf names the server it was taken
 * from and may include files the archive does not hold. Answers the files written.
 */
export async function writeServerConfig(
  server: JobServer,
  paths: JobPaths,
  osUser: OsUser,
  port?: number,
): Promise<ServerConfigFiles> {
  await ensureOwnedDir(paths.confDir, osUser);
  const conf = join(paths.confDir, `${server}.conf`);
  const hba = join(paths.confDir, `${server}_hba.conf`);
  const settings = server === 'check' ? checkSettings(paths) : serveSettings(paths, port);
  await writeOwned(conf, renderConf(settings, HEADER), osUser);
  await writeOwned(hba, renderHbaRules(hbaRules(server), HEADER), osUser);
  return { configFile: conf, hbaFile: hba };
}

/** What both servers share: TLS from the Secret's certificate, SCRAM passwords only. */
function commonSettings(paths: JobPaths): Record<string, SettingValue> {
  return {
    ssl: 'on',
    ssl_cert_file: paths.certFile,
    ssl_key_file: paths.keyFile,
    ssl_min_protocol_version: 'TLSv1.2',
    password_encryption: 'scram-sha-256',
    logging_collector: 'off',
    log_destination: 'stderr',
    // As every pgcloud server: the commit times replayed are kept (a branch's parent.at).
    track_commit_timestamp: 'on',
  };
}

/**
 * The checking server (its port, address and socket come on the command line). No hot
 * standby while it recovers: a hot standby refuses to replay WAL of a server whose
 * max_connections (and the like) were above its own, and the archive's are not known.
 */
function checkSettings(paths: JobPaths): Record<string, SettingValue> {
  return {
    ...commonSettings(paths),
    unix_socket_permissions: '0700',
    hot_standby: 'off',
    max_connections: 20,
  };
}

/**
 * The serving server: TLS replication logins from anywhere, no socket. The new Cluster
 * streams from it as a hot standby, which requires max_connections, max_worker_processes
 * and max_wal_senders at most its own: these stay below what any pgcloud Cluster has.
 * pg_basebackup --wal-method=stream takes two WAL senders and a temporary slot.
 */
function serveSettings(paths: JobPaths, port: number | undefined): Record<string, SettingValue> {
  if (port === undefined) throw new Error('the serving server needs a port');
  return {
    ...commonSettings(paths),
    listen_addresses: '*',
    port,
    unix_socket_directories: '',
    wal_level: 'replica',
    max_wal_senders: 4,
    max_replication_slots: 4,
    max_connections: 10,
    max_worker_processes: 2,
  };
}

/**
 * The checking server: its socket (0700, so only the OS user reaches it) for the
 * superuser session that adopts the roles, and TLS logins on the loopback for the check.
 * The serving server: the replication role over TLS, nothing else.
 */
function hbaRules(server: JobServer): string[][] {
  if (server === 'serve')
    return [['hostssl', 'replication', REPLICATION_ROLE, 'all', 'scram-sha-256']];
  return [
    ['local', 'all', 'all', '', 'trust'],
    ['hostssl', 'all', 'all', '127.0.0.1/32', 'scram-sha-256'],
  ];
}

// The archive's files that name the server it came from; postgresql.conf and pg_hba.conf
// are replaced by neutral ones, as the clone's platform writes its own over them.
const NEUTRAL_FILES: Record<string, string> = {
  'postgresql.conf': '# Settings are given where the server is started.\n',
  'pg_hba.conf': 'local all all peer\n',
  'postgresql.auto.conf': autoConf(),
};
const DROPPED = /^(pgcloud.*|standby\.signal|recovery\.signal|backup_manifest)$/;

/**
 * Leaves nothing of pgcloud's in the extracted data, which the new Cluster clones: the
 * local driver's settings file and restore marker, a hold's standby.signal, the ALTER
 * SYSTEM settings of the backup's time, the stale backup_manifest.
 */
export async function neutralizeData(dataDir: string, osUser: OsUser): Promise<void> {
  for (const name of await readdir(dataDir))
    if (DROPPED.test(name)) await rm(join(dataDir, name), { recursive: true, force: true });
  for (const [name, text] of Object.entries(NEUTRAL_FILES))
    await writeOwned(join(dataDir, name), text, osUser);
}
