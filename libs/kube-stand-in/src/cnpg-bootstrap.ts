import type { PgTools } from '@pgcloud/postgres';
import {
  chownFile,
  ensureCluster,
  ensureOwnedDir,
  formatConninfo,
  runAsOsUser,
  runPgTool,
  SERVER_CONF_FILE,
} from '@pgcloud/postgres';
import { randomBytes } from 'node:crypto';
import { appendFile, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecretLookup, StandInCluster } from './cnpg-cluster-fields.js';
import { basicAuthPassword, secretValue } from './cnpg-cluster-fields.js';
import type { ApplicationDatabase } from './cnpg-roles.js';
import type { StandInPaths } from './cnpg-server-files.js';

/**
 * What is left to do once a freshly bootstrapped server runs (and is a primary: a clone
 * starts as a standby, promoted unless `spec.replica.enabled` keeps it one).
 */
export interface AfterBootstrap {
  app?: ApplicationDatabase;
}

/** The address a cluster DNS name (`<svc>.<ns>.svc`) resolves to, where the stand-in knows it. */
export type HostResolver = (host: string) => string | undefined;

type BootstrapPaths = Pick<StandInPaths, 'pgdata' | 'externalDir' | 'templateDir'>;

// Connection parameter names libpq knows are lowercase words; anything else is refused.
const CONNINFO_KEY = /^[a-z_]+$/;

/**
 * Makes the server's data directory as the Cluster's `spec.bootstrap` says: `initdb` (a
 * copy of one initdb result per data root, made as libs/postgres makes every cluster:
 * UTF8, C.UTF-8, data checksums on, whatever the initdb options ask; a non-UTF8 encoding
 * is refused rather than ignored) or `pg_basebackup` from the `externalClusters` entry
 * named by `source`. Both build beside `pgdata` and rename into place, so a failure
 * leaves no half-made data directory. Copies are not synced to disk: test data that a
 * power cut would lose.
 */
export async function bootstrapData(
  cluster: StandInCluster,
  secrets: SecretLookup,
  paths: BootstrapPaths,
  tools: PgTools,
  resolveHost: HostResolver = () => undefined,
): Promise<AfterBootstrap> {
  const { initdb, pg_basebackup: clone } = cluster.spec.bootstrap ?? {};
  if (initdb && clone) throw new Error('spec.bootstrap names more than one method');
  if (initdb) {
    const encoding = initdb.encoding?.toUpperCase().replace('-', '');
    if (encoding !== undefined && encoding !== 'UTF8')
      throw new Error(`the CNPG stand-in makes UTF8 clusters only, not ${initdb.encoding}`);
    const app = applicationDatabase(initdb, secrets, 'initdb');
    await copyTemplate(paths, tools);
    return { app };
  }
  if (clone) {
    const app =
      clone.database || clone.owner
        ? applicationDatabase(clone, secrets, 'pg_basebackup')
        : undefined;
    await cloneFromSource(cluster, clone.source, secrets, paths, tools, resolveHost);
    return app ? { app } : {};
  }
  // CNPG's defaulting webhook would fill in initdb (database and owner `app`); no webhook here.
  throw new Error('spec.bootstrap names no method (the stand-in has no defaulting webhook)');
}

function applicationDatabase(
  method: { database?: string; owner?: string; secret?: { name: string } },
  secrets: SecretLookup,
  methodName: string,
): ApplicationDatabase {
  const { database, owner, secret } = method;
  if (!database || !owner)
    throw new Error(
      `bootstrap.${methodName} needs database and owner (no defaulting webhook here)`,
    );
  if (!secret) return { database, owner };
  return { database, owner, password: basicAuthPassword(secrets, secret.name, owner) };
}

/**
 * Runs pg_basebackup (WAL streamed alongside, fast checkpoint) from the source with its
 * connection parameters; the password goes by environment, the CA into a file of the
 * server's own. A `host` that names a Service (`<svc>.<ns>.svc`) gets `hostaddr`, the
 * Service's address here (there is no cluster DNS), and keeps `host` for verify-full's
 * check of the certificate. The copy gets a standby.signal and the include of the
 * stand-in's settings file, should the source's postgresql.conf lack it.
 */
async function cloneFromSource(
  cluster: StandInCluster,
  sourceName: string,
  secrets: SecretLookup,
  paths: BootstrapPaths,
  tools: PgTools,
  resolveHost: HostResolver,
): Promise<void> {
  const source = cluster.spec.externalClusters?.find((entry) => entry.name === sourceName);
  if (!source) throw new Error(`spec.externalClusters has no entry '${sourceName}'`);
  const params: Record<string, string> = { ...source.connectionParameters };
  const badKey = Object.keys(params).find((key) => !CONNINFO_KEY.test(key));
  if (badKey !== undefined) throw new Error(`not a connection parameter: '${badKey}'`);
  if (source.sslRootCert) {
    const dir = join(paths.externalDir, source.name);
    await ensureOwnedDir(dir, tools.osUser);
    const file = join(dir, 'sslrootcert.crt');
    const { name, key } = source.sslRootCert;
    await writeFile(file, secretValue(secrets, name, key), { mode: 0o600 });
    await chownFile(file, tools.osUser, 0o600);
    params.sslrootcert = file;
  }
  const address = params.host === undefined ? undefined : resolveHost(params.host);
  if (address !== undefined && params.hostaddr === undefined) params.hostaddr = address;
  params.application_name ??= `${cluster.metadata.name}-bootstrap`;
  const env = source.password
    ? { PGPASSWORD: secretValue(secrets, source.password.name, source.password.key) }
    : undefined;
  const building = `${paths.pgdata}.building-${randomBytes(6).toString('hex')}`;
  const { binDir, osUser, signal } = tools;
  try {
    const conninfo = formatConninfo(Object.entries(params));
    const args = [`--pgdata=${building}`, '--wal-method=stream', '--checkpoint=fast', '--no-sync'];
    await runPgTool(binDir, 'pg_basebackup', [...args, `--dbname=${conninfo}`], {
      osUser,
      signal,
      ...(env ? { env } : {}),
    });
    await rm(join(building, 'recovery.signal'), { force: true });
    await writeFile(join(building, 'standby.signal'), '');
    await chownFile(join(building, 'standby.signal'), osUser, 0o600);
    await ensureIncludesServerConf(join(building, 'postgresql.conf'));
    await rename(building, paths.pgdata);
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

async function copyTemplate(paths: BootstrapPaths, tools: PgTools): Promise<void> {
  await ensureCluster(paths.templateDir, tools);
  const building = `${paths.pgdata}.building-${randomBytes(6).toString('hex')}`;
  try {
    await runAsOsUser('cp', ['-a', paths.templateDir, building], { osUser: tools.osUser });
    await rename(building, paths.pgdata);
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

async function ensureIncludesServerConf(postgresqlConf: string): Promise<void> {
  const text = await readFile(postgresqlConf, 'utf8');
  if (text.includes(`include '${SERVER_CONF_FILE}'`)) return;
  await appendFile(
    postgresqlConf,
    `\n# ${SERVER_CONF_FILE} last, so that its settings win.\ninclude '${SERVER_CONF_FILE}'\n`,
  );
}
