import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SERVICE_CALLS } from '@pgcloud/contracts';
import type { Definitions } from './broker-topology.js';
import { readDefinitions } from './broker-topology.js';
import type { Manifest } from './manifests.js';
import {
  KUBERNETES_DIR,
  appWorkloads,
  referencedSecrets,
  render,
  schemaProblems,
} from './manifests.js';

const APPS = Object.keys(SERVICE_CALLS).sort();
const DEV = join(KUBERNETES_DIR, 'overlays', 'dev');

type Secret = Manifest & { stringData: Record<string, string> };

/** The dev overlay's Secrets as a trial user makes them: make-secrets.mjs's output. */
function devSecrets(): Manifest[] {
  const output = execFileSync(process.execPath, [join(DEV, 'make-secrets.mjs')], {
    encoding: 'utf8',
  });
  const list = JSON.parse(output) as { kind: string; items: Manifest[] };
  assert.equal(list.kind, 'List');
  return list.items;
}

/** Whether `hash` is RabbitMQ's rabbit_password_hashing_sha256 of `password`. */
function rabbitHashMatches(hash: string, password: string): boolean {
  const bytes = Buffer.from(hash, 'base64');
  const salt = bytes.subarray(0, 4);
  const digest = createHash('sha256').update(salt).update(password, 'utf8').digest();
  return bytes.length === 36 && digest.equals(bytes.subarray(4));
}

describe('deploy/kubernetes/overlays/dev/make-secrets.mjs', () => {
  const items = devSecrets();
  const secrets = new Map(
    items.filter((o): o is Secret => o.kind === 'Secret').map((s) => [s.metadata.name, s]),
  );
  const data = (name: string): Record<string, string> => {
    const secret = secrets.get(name);
    assert.ok(secret, `make-secrets.mjs makes ${name}`);
    return secret.stringData;
  };

  it('makes valid objects in the namespace pgcloud', () => {
    assert.deepEqual(items.flatMap(schemaProblems), []);
    for (const item of items)
      if (item.kind !== 'Namespace') assert.equal(item.metadata.namespace, 'pgcloud');
  });

  it('makes every Secret the dev overlay refers to, with every key its apps read', () => {
    const objects = render(DEV);
    const missing = [...referencedSecrets(objects)].filter((name) => !secrets.has(name));
    assert.deepEqual(missing, []);
    for (const [app, workload] of appWorkloads(objects)) {
      const [container] = workload.spec.template.spec.containers;
      const files = (container?.env ?? []).filter((v) => v.name.endsWith('_FILE'));
      assert.ok(files.length > 0, `${app} reads its secrets from files`);
      for (const file of files)
        assert.ok(
          (file.value ?? '').split('/').pop()! in data(`${app}-secrets`),
          `${app}-secrets holds ${file.value}`,
        );
    }
  });

  it("gives each app its own broker user, whose password the broker's definitions hold", () => {
    const loaded = JSON.parse(
      data('rabbitmq-definitions')['definitions.json'] ?? '',
    ) as Definitions;
    const committed = readDefinitions();
    // The same users and permissions as the repository's file, with passwords.
    const withoutHashes = {
      ...loaded,
      users: loaded.users.map((user) => ({ ...user, password_hash: '' })),
    };
    assert.deepEqual(withoutHashes, committed);
    const users = new Set<string>();
    for (const app of APPS) {
      const url = new URL(data(`${app}-secrets`)['RABBITMQ_URL'] ?? '');
      assert.equal(url.protocol, 'amqp:');
      assert.equal(url.host, 'rabbitmq:5672', 'the dev broker Service');
      assert.equal(url.pathname, '/pgcloud', 'the vhost pgcloud');
      assert.equal(url.username, app, `${app} logs in as itself`);
      users.add(url.username);
      const hash = loaded.users.find((user) => user.name === app)?.password_hash ?? '';
      assert.ok(rabbitHashMatches(hash, decodeURIComponent(url.password)), `${app}'s password`);
      assert.ok(!rabbitHashMatches(hash, `${url.password}x`));
    }
    assert.equal(users.size, APPS.length);
  });

  it('gives the apps the dev servers’ credentials', () => {
    const postgres = data('postgres-credentials')['password'];
    const minio = data('minio-credentials');
    for (const app of APPS) {
      const secret = data(`${app}-secrets`);
      const database = new URL(secret['DATABASE_URL'] ?? '');
      assert.equal(`${database.protocol}//${database.host}`, 'postgres://postgres:5432');
      assert.equal(database.username, 'pgcloud');
      assert.equal(database.password, postgres);
      if (app === 'backup-service' || app === 'pitr-worker') {
        assert.equal(secret['S3_ACCESS_KEY_ID'], minio['user']);
        assert.equal(secret['S3_SECRET_ACCESS_KEY'], minio['password']);
      }
    }
    // Each app that seals secrets at rest has a key of its own.
    const keys = ['database-provisioner', 'notification-service'].map(
      (app) => data(`${app}-secrets`)['ENCRYPTION_KEY'] ?? '',
    );
    for (const key of keys) assert.equal(Buffer.from(key, 'base64').length, 32);
    assert.notEqual(keys[0], keys[1]);
  });

  it('makes fresh passwords on every run', () => {
    const again = devSecrets().find((o) => o.metadata.name === 'postgres-credentials') as Secret;
    assert.notEqual(again.stringData['password'], data('postgres-credentials')['password']);
  });
});

describe('deploy/kubernetes/README.md', () => {
  it('names every Secret the production overlay refers to', () => {
    const readme = readFileSync(join(KUBERNETES_DIR, 'README.md'), 'utf8');
    const production = render(join(KUBERNETES_DIR, 'overlays', 'production'));
    const unnamed = [...referencedSecrets(production)].filter((name) => !readme.includes(name));
    assert.deepEqual(unnamed, []);
  });
});
