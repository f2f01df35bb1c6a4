import type { OsUser } from '@pgcloud/postgres';
import {
  assertSocketPathFits,
  chownFile,
  ensureOwnedDir,
  renderConf,
  SERVER_CONF_FILE,
} from '@pgcloud/postgres';
import { createHash, X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SecretLookup, StandInCluster } from './cnpg-cluster-fields.js';
import { secretValue } from './cnpg-cluster-fields.js';
import { STAND_IN_HEADER, standInHba, standInSettings } from './cnpg-server-config.js';

/** Where one stand-in server keeps its files: the whole `serverDir` goes with the server. */
export interface StandInPaths {
  serverDir: string;
  pgdata: string;
  socketDir: string;
  tlsDir: string;
  certFile: string;
  keyFile: string;
  /** The client CA (`clientCASecret`): client certificates are checked against it. */
  clientCaFile: string;
  /** The server's log. */
  logFile: string;
  /** Files for `externalClusters` entries (a source's CA). */
  externalDir: string;
  /** initdb's result, made once per data root: every initdb bootstrap copies it. */
  templateDir: string;
}

// Kubernetes names (RFC 1123 labels): safe as path segments.
const KUBE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The files of the Cluster `namespace/name` under `dataRoot`. The socket directory sits
 * apart, under a short hash, so its path stays within the kernel's limit whatever the
 * names' lengths; it and the template have names no namespace can take (`_`).
 */
export function standInPaths(dataRoot: string, namespace: string, name: string): StandInPaths {
  for (const part of [namespace, name])
    if (!KUBE_NAME.test(part) || part.length > 63)
      throw new Error(`not a Kubernetes name: '${part}'`);
  const serverDir = join(dataRoot, namespace, name);
  const tlsDir = join(serverDir, 'tls');
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 12);
  return {
    serverDir,
    pgdata: join(serverDir, 'pgdata'),
    socketDir: join(dataRoot, '_sockets', hash),
    tlsDir,
    certFile: join(tlsDir, 'server.crt'),
    keyFile: join(tlsDir, 'server.key'),
    clientCaFile: join(tlsDir, 'client-ca.crt'),
    logFile: join(serverDir, 'postgresql.log'),
    externalDir: join(serverDir, 'external'),
    templateDir: join(dataRoot, '_template', 'pgdata'),
  };
}

/** Makes the server's directories, owned by the OS user (0700). */
export async function ensureServerDirs(paths: StandInPaths, osUser: OsUser): Promise<void> {
  const { serverDir, tlsDir, externalDir, socketDir, templateDir } = paths;
  for (const dir of [serverDir, tlsDir, externalDir, socketDir, dirname(templateDir)])
    await ensureOwnedDir(dir, osUser);
}

/** The port a server's settings file holds, when the server has been configured before. */
export async function configuredPort(paths: StandInPaths): Promise<number | undefined> {
  const text = await readFile(join(paths.pgdata, SERVER_CONF_FILE), 'utf8').catch(() => '');
  const match = /^port = (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * Writes what the operator owns in the data directory: the certificate and key from
 * `serverTLSSecret`, the client CA from `clientCASecret` (ssl_ca_file: a `cert` login is
 * checked against it), the settings file and pg_hba.conf. A `serverCASecret` must hold the
 * CA that issued the certificate (clients verify against it); CNPG would make its own
 * CA and certificate when the Cluster names none, the stand-in needs them named. As CNPG,
 * a `clientCASecret` without `ca.key` needs a `replicationTLSSecret` it issued.
 */
export async function writeServerFiles(
  cluster: StandInCluster,
  secrets: SecretLookup,
  paths: StandInPaths,
  port: number,
  osUser: OsUser,
): Promise<void> {
  assertSocketPathFits(paths.socketDir, port, {
    name: 'the stand-in data root',
    value: paths.socketDir,
  });
  const { serverTLSSecret, serverCASecret, clientCASecret, replicationTLSSecret } =
    cluster.spec.certificates ?? {};
  if (!serverTLSSecret)
    throw new Error('the CNPG stand-in needs spec.certificates.serverTLSSecret');
  const cert = secretValue(secrets, serverTLSSecret, 'tls.crt');
  const key = secretValue(secrets, serverTLSSecret, 'tls.key');
  if (serverCASecret)
    assertIssuedBy(cert, secretValue(secrets, serverCASecret, 'ca.crt'), 'serverTLSSecret');
  const clientCa = clientCASecret ? secretValue(secrets, clientCASecret, 'ca.crt') : undefined;
  if (clientCa !== undefined) {
    if (!replicationTLSSecret)
      throw new Error('a clientCASecret without ca.key needs a replicationTLSSecret');
    const replication = secretValue(secrets, replicationTLSSecret, 'tls.crt');
    assertIssuedBy(replication, clientCa, 'replicationTLSSecret');
  }
  const settings = standInSettings({
    clusterName: cluster.metadata.name,
    port,
    socketDir: paths.socketDir,
    certFile: paths.certFile,
    keyFile: paths.keyFile,
    ...(clientCa !== undefined ? { clientCaFile: paths.clientCaFile } : {}),
    parameters: cluster.spec.postgresql?.parameters ?? {},
  });
  const files: [string, string][] = [
    [paths.certFile, cert],
    [paths.keyFile, key],
    ...(clientCa !== undefined ? [[paths.clientCaFile, clientCa] as [string, string]] : []),
    [join(paths.pgdata, SERVER_CONF_FILE), renderConf(settings, STAND_IN_HEADER)],
    [join(paths.pgdata, 'pg_hba.conf'), standInHba(cluster.spec.postgresql?.pg_hba ?? [])],
  ];
  for (const [file, text] of files) {
    await writeFile(file, text, { mode: 0o600 });
    await chownFile(file, osUser, 0o600);
  }
}

function assertIssuedBy(certPem: string, caPem: string, secret: string): void {
  const cert = new X509Certificate(certPem);
  const ca = new X509Certificate(caPem);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey))
    throw new Error(`${secret}'s certificate was not issued by its CA's ca.crt`);
}
