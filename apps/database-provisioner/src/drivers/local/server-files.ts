import type { DatabaseConfig } from '@pgcloud/contracts';
import type { CertificateAuthority, OsUser } from '@pgcloud/postgres';
import {
  chownFile,
  ensureOwnedDir,
  fsyncPath,
  issueServerCertificate,
  renderConf,
  runAsOsUser,
  runPgTool,
  SERVER_CONF_FILE,
} from '@pgcloud/postgres';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GENERATED_HEADER, renderHba, serverSettings } from './cluster-config.js';
import { exists } from './local-files.js';
import type { ServerPaths } from './server-paths.js';

/** What making a server's files takes besides the server's own paths. */
export interface ServerFilesContext {
  pgBinDir: string;
  templateDir: string;
  host: string;
  listenAddress: string;
  osUser: OsUser;
  ca: CertificateAuthority;
}

/** The server-specific part of the files: its port and its size. */
export interface ServerFilesSpec {
  port: number;
  config: DatabaseConfig;
}

/** Fills `pgdata.partial` with a data directory: a copy of the template, or a branch's copy. */
export type DataFill = (paths: ServerPaths, context: ServerFilesContext) => Promise<void>;

/**
 * Makes a server's files: its certificate, its data (a copy of the template unless `fill`
 * says otherwise) and its settings. The data is prepared beside `pgdata` and renamed last,
 * so `pgdata` is always complete and a crash part-way leaves only `pgdata.partial`, which
 * the next attempt replaces.
 */
export async function buildServerFiles(
  spec: ServerFilesSpec,
  paths: ServerPaths,
  context: ServerFilesContext,
  fill: DataFill = copyTemplate,
): Promise<void> {
  const { osUser } = context;
  for (const dir of [paths.serverDir, paths.socketDir, paths.tlsDir])
    await ensureOwnedDir(dir, osUser);
  // The copy dominates (tens to hundreds of ms); the certificate is made meanwhile.
  await Promise.all([ensureCertificate(paths, context), fill(paths, context)]);
  await writeSettings(spec, paths, context);
  // cp does not fsync, and a started server never syncs files it did not write: without
  // this, a power cut soon after would lose catalog files the new server relies on.
  const sync = ['--sync-only', '-D', paths.pgdataPartial];
  await runPgTool(context.pgBinDir, 'initdb', sync, { osUser });
  await rename(paths.pgdataPartial, paths.pgdata);
  await fsyncPath(paths.serverDir);
}

async function ensureCertificate(paths: ServerPaths, context: ServerFilesContext): Promise<void> {
  if ((await exists(paths.certFile)) && (await exists(paths.keyFile))) return;
  await issueServerCertificate(context.ca, {
    commonName: context.host,
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
    outDir: paths.tlsDir,
    osUser: context.osUser,
  });
}

async function copyTemplate(paths: ServerPaths, context: ServerFilesContext): Promise<void> {
  await rm(paths.pgdataPartial, { recursive: true, force: true });
  const args = ['-a', context.templateDir, paths.pgdataPartial];
  await runAsOsUser('cp', args, { osUser: context.osUser });
}

/**
 * A server's settings file written anew for a new size (a resize): replaced whole by a
 * rename, so a crash leaves the old file or the new one. It takes effect at the next start.
 */
export async function rewriteServerConf(
  spec: ServerFilesSpec,
  paths: ServerPaths,
  context: Pick<ServerFilesContext, 'listenAddress' | 'osUser'>,
): Promise<void> {
  const file = join(paths.pgdata, SERVER_CONF_FILE);
  const partial = `${file}.partial`;
  await writeFile(partial, serverConf(spec, paths, context.listenAddress), { mode: 0o600 });
  await chownFile(partial, context.osUser, 0o600);
  await fsyncPath(partial);
  await rename(partial, file);
  await fsyncPath(paths.pgdata);
}

function serverConf(spec: ServerFilesSpec, paths: ServerPaths, listenAddress: string): string {
  const settings = serverSettings({
    port: spec.port,
    listenAddress,
    socketDir: paths.socketDir,
    certFile: paths.certFile,
    keyFile: paths.keyFile,
    config: spec.config,
  });
  return renderConf(settings, GENERATED_HEADER);
}

async function writeSettings(
  spec: ServerFilesSpec,
  paths: ServerPaths,
  context: ServerFilesContext,
): Promise<void> {
  const files = {
    [SERVER_CONF_FILE]: serverConf(spec, paths, context.listenAddress),
    'pg_hba.conf': renderHba(context.listenAddress),
  };
  for (const [name, text] of Object.entries(files)) {
    const file = join(paths.pgdataPartial, name);
    await writeFile(file, text, { mode: 0o600 });
    await chownFile(file, context.osUser, 0o600);
  }
}
