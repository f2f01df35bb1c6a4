import type { CertificateAuthority, OsUser } from '@pgcloud/postgres';
import { issueServerCertificate, scramSha256Verifier } from '@pgcloud/postgres';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StandInSecret } from './cnpg-cluster-fields.js';

/**
 * Clusters and Secrets like the ones the kubernetes driver makes, for the stand-in's
 * integration spec: an initdb Cluster (g1) and a clone of it by pg_basebackup (g2).
 */
export const namespace = 'pgcloud-test';
export const passwords = {
  app: randomBytes(12).toString('hex'),
  replication: randomBytes(12).toString('hex'),
  superuser: randomBytes(12).toString('hex'),
  reporting: randomBytes(12).toString('hex'),
};
const secrets = new Map<string, StandInSecret>();
/** The Secrets of the test namespace. */
export const lookup = (name: string): StandInSecret | undefined => secrets.get(name);

function putSecret(name: string, values: Record<string, string>): void {
  const data = Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  );
  secrets.set(name, { data });
}

/**
 * Makes the Secrets: the app and replication roles' SCRAM verifiers, the superuser's
 * plain password, the server certificate (for 127.0.0.1 and localhost) and its CA, and
 * the plain replication password a clone's externalClusters entry logs in with.
 */
export async function makeSecrets(
  ca: CertificateAuthority,
  dir: string,
  osUser: OsUser,
): Promise<void> {
  const issued = await issueServerCertificate(ca, {
    commonName: `srv-t.${namespace}.svc`,
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    outDir: join(dir, 'issued'),
    osUser,
  });
  putSecret('srv-t-app', { username: 'appdb', password: scramSha256Verifier(passwords.app) });
  putSecret('srv-t-replication', {
    username: 'pgcloud_replication',
    password: scramSha256Verifier(passwords.replication),
  });
  putSecret('srv-t-superuser', { username: 'postgres', password: passwords.superuser });
  putSecret('srv-t-reporting', { username: 'reporting', password: passwords.reporting });
  putSecret('srv-t-tls', {
    'tls.crt': await readFile(issued.certPath, 'utf8'),
    'tls.key': await readFile(issued.keyPath, 'utf8'),
  });
  putSecret('srv-t-ca', { 'ca.crt': ca.pem });
  putSecret('srv-t-restore-source', { password: passwords.replication });
}

/** pg_hba lines taking TLS logins only... and nothing else. */
export const HOSTSSL_ONLY = [
  'hostssl replication pgcloud_replication all scram-sha-256',
  'hostssl all all all scram-sha-256',
];
/** ...and refusing every other TCP login, against CNPG's closing default rule. */
export const PG_HBA = [...HOSTSSL_ONLY, 'hostnossl all all all reject'];

/** The initdb Cluster, with its parameters, pg_hba lines and extra managed roles. */
export function clusterG1(
  parameters: Record<string, string>,
  pgHba = PG_HBA,
  extraRoles: object[] = [],
) {
  return {
    apiVersion: 'postgresql.cnpg.io/v1',
    kind: 'Cluster',
    metadata: { name: 'srv-t-g1', namespace },
    spec: {
      instances: 1,
      enableSuperuserAccess: true,
      superuserSecret: { name: 'srv-t-superuser' },
      postgresql: { parameters, pg_hba: pgHba },
      bootstrap: { initdb: { database: 'appdb', owner: 'appdb', secret: { name: 'srv-t-app' } } },
      storage: { size: '1Gi' },
      certificates: { serverTLSSecret: 'srv-t-tls', serverCASecret: 'srv-t-ca' },
      managed: {
        roles: [
          {
            name: 'appdb',
            ensure: 'present' as const,
            login: true,
            passwordSecret: { name: 'srv-t-app' },
          },
          {
            name: 'pgcloud_replication',
            ensure: 'present' as const,
            login: true,
            replication: true,
            passwordSecret: { name: 'srv-t-replication' },
          },
          ...(extraRoles as { name: string }[]),
        ],
      },
    },
  };
}

/** g1's clone by pg_basebackup from `sourcePort`, as its replication role over verified TLS. */
export function clusterG2(sourcePort: number) {
  const base = clusterG1({ work_mem: '7MB' });
  return {
    ...base,
    metadata: { name: 'srv-t-g2', namespace },
    spec: {
      ...base.spec,
      bootstrap: {
        pg_basebackup: {
          source: 'restore-source',
          database: 'appdb',
          owner: 'appdb',
          secret: { name: 'srv-t-app' },
        },
      },
      externalClusters: [
        {
          name: 'restore-source',
          connectionParameters: {
            host: '127.0.0.1',
            port: String(sourcePort),
            user: 'pgcloud_replication',
            sslmode: 'verify-full',
            dbname: 'postgres',
          },
          password: { name: 'srv-t-restore-source', key: 'password' },
          sslRootCert: { name: 'srv-t-ca', key: 'ca.crt' },
        },
      ],
    },
  };
}
