import { scramSha256Verifier } from '@pgcloud/postgres';
import { REPLICATION_ROLE } from '../database-driver.js';
import type { ServerNames } from './server-names.js';

type SecretObject = Record<string, unknown>;

function secret(
  names: ServerNames,
  name: string,
  type: string,
  data: Record<string, string>,
): SecretObject {
  const encoded = Object.entries(data).map(([key, value]) => [
    key,
    Buffer.from(value, 'utf8').toString('base64'),
  ]);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: names.namespace, labels: names.labels },
    type,
    data: Object.fromEntries(encoded),
  };
}

/**
 * The login roles' Secrets, as CNPG's managed roles read them (basic-auth: username and
 * password). The passwords are SCRAM verifiers: the plain ones stay sealed in pgcloud's
 * records and never reach the cluster.
 */
export function roleSecrets(
  names: ServerNames,
  roles: { databaseName: string; password: string; replicationPassword: string },
): SecretObject[] {
  return [
    secret(names, names.appSecret, 'kubernetes.io/basic-auth', {
      username: roles.databaseName,
      password: scramSha256Verifier(roles.password),
    }),
    secret(names, names.replicationSecret, 'kubernetes.io/basic-auth', {
      username: REPLICATION_ROLE,
      password: scramSha256Verifier(roles.replicationPassword),
    }),
  ];
}

/**
 * A certificate and its key (kubernetes.io/tls): the server's, which CNPG serves TLS with
 * (`names.tlsSecret`), or the streaming_replica client certificate its replicas log in
 * with (`names.replicationTlsSecret`).
 */
export function tlsSecret(
  names: ServerNames,
  tls: { certPem: string; keyPem: string },
  name: string = names.tlsSecret,
): SecretObject {
  return secret(names, name, 'kubernetes.io/tls', {
    'tls.crt': tls.certPem,
    'tls.key': tls.keyPem,
  });
}

/**
 * The deployment CA's certificate (never its key): clients check the server's certificate
 * against it, and the server checks client certificates against it (the provisioner's
 * superuser login, CNPG's replicas).
 */
export function caSecret(names: ServerNames, caPem: string): SecretObject {
  return secret(names, names.caSecret, 'Opaque', { 'ca.crt': caPem });
}

/** A value of a Secret read back from the API. */
export function secretValue(object: { data?: Record<string, string> }, key: string): string {
  const value = object.data?.[key];
  if (value === undefined) throw new Error(`the secret has no ${key}`);
  return Buffer.from(value, 'base64').toString('utf8');
}
