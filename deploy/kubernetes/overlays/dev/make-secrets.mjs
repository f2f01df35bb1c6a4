#!/usr/bin/env node
// The dev overlay's Secrets, with fresh random passwords, printed as one Kubernetes List
// (JSON) for `kubectl create`, so nothing secret is ever written to the checkout:
//
//   node deploy/kubernetes/overlays/dev/make-secrets.mjs | kubectl create -f -
//
// `create`, not `apply`: a second run must not replace passwords the servers already use
// (PostgreSQL keeps the first one). To start over, delete the namespace pgcloud.
//
// What it makes (the namespace pgcloud, and in it):
// - <app>-secrets for each of the seven apps: RABBITMQ_URL as the app's own broker user,
//   DATABASE_URL, and what else the app needs (S3 keys, the provisioner's and
//   notification-service's ENCRYPTION_KEY, each its own);
// - rabbitmq-definitions: ../../rabbitmq/definitions.json with each user's password hash,
//   which the dev broker loads at boot;
// - postgres-credentials and minio-credentials for the dev servers.
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { APPS, brokerLogins, password } from '../../rabbitmq/logins.mjs';

const NAMESPACE = 'pgcloud';
const S3_APPS = new Set(['backup-service', 'pitr-worker']);
/** The apps that seal secrets at rest, each with a key of its own. */
const KEY_APPS = new Set(['database-provisioner', 'notification-service']);

const secret = (name, stringData) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: NAMESPACE, labels: { 'app.kubernetes.io/part-of': 'pgcloud' } },
  type: 'Opaque',
  stringData,
});

/** Every Secret the dev overlay refers to, consistent with one another. */
export function devSecrets() {
  const { definitions, urls } = brokerLogins('rabbitmq:5672');
  const postgresPassword = password();
  const minio = { user: 'pgcloud', password: password() };
  const databaseUrl = `postgres://pgcloud:${postgresPassword}@postgres:5432/pgcloud`;
  const items = [];
  for (const app of APPS) {
    const data = {
      RABBITMQ_URL: urls[app],
      DATABASE_URL: databaseUrl,
    };
    if (S3_APPS.has(app)) {
      data.S3_ACCESS_KEY_ID = minio.user;
      data.S3_SECRET_ACCESS_KEY = minio.password;
    }
    if (KEY_APPS.has(app)) data.ENCRYPTION_KEY = randomBytes(32).toString('base64');
    items.push(secret(`${app}-secrets`, data));
  }
  items.push(
    secret('rabbitmq-definitions', { 'definitions.json': JSON.stringify(definitions, null, 2) }),
    secret('postgres-credentials', { password: postgresPassword }),
    secret('minio-credentials', minio),
  );
  // The namespace first (as base/namespace.yaml has it), so one `kubectl create` does it all.
  const namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: NAMESPACE,
      labels: { 'pod-security.kubernetes.io/enforce': 'restricted' },
    },
  };
  return { apiVersion: 'v1', kind: 'List', items: [namespace, ...items] };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${JSON.stringify(devSecrets(), null, 2)}\n`);
}
