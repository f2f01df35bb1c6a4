import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Manifest } from './manifests.js';
import { KUBERNETES_DIR, ROOT, render, workloads } from './manifests.js';
import type { Endpoint } from './network-policies.js';
import { PolicyModel, inCidr, matches } from './network-policies.js';

const DATABASES = 'pgcloud-databases';
const METADATA_SERVICE = { address: '169.254.169.254' };
const OBJECT_STORE = { address: '52.218.1.10' };
const API_SERVER = { address: '10.96.0.1' };
/** The broker and the metadata database of the production overlays: outside the cluster. */
const BROKER = { address: '10.20.0.5' };

/** The label a restore's Job pods carry (the provisioner's restore-objects.ts). */
const RESTORE_OF_LABEL = /RESTORE_OF_LABEL = '([^']+)'/.exec(
  readFileSync(
    join(ROOT, 'apps/database-provisioner/src/drivers/kubernetes/restore-objects.ts'),
    'utf8',
  ),
)?.[1];

/** The pods of an overlay's workloads, by name, as their templates label them. */
function podsOf(objects: Manifest[]): Map<string, Endpoint> {
  return new Map(
    workloads(objects).map((w) => [
      w.metadata.name,
      { namespace: w.metadata.namespace ?? 'pgcloud', labels: w.spec.template.metadata.labels },
    ]),
  );
}

/** A pod of a namespace that is no part of pgcloud: a user's application. */
function clientPod(namespace: string): Endpoint {
  return { namespace, labels: { app: 'shop' } };
}

function pod(pods: Map<string, Endpoint>, name: string): Endpoint {
  const found = pods.get(name);
  assert.ok(found, `the overlay runs ${name}`);
  return found;
}

describe('the policy model', () => {
  it('reads selectors and address blocks as Kubernetes does', () => {
    assert.ok(matches({}, { a: '1' }));
    assert.ok(matches({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }, { a: '1' }));
    assert.ok(!matches({ matchExpressions: [{ key: 'a', operator: 'In', values: ['2'] }] }, {}));
    assert.ok(inCidr('169.254.169.254', '169.254.0.0/16'));
    assert.ok(inCidr('8.8.8.8', '0.0.0.0/0'));
    assert.ok(!inCidr('10.1.0.1', '10.0.0.0/16'));
  });
});

describe('deploy/kubernetes/overlays/cnpg: who reaches what', () => {
  const objects = render(join(KUBERNETES_DIR, 'overlays', 'cnpg'));
  const model = new PolicyModel(objects, {
    shop: { 'pgcloud.io/database-client': 'allowed' },
    'cnpg-system': {},
  });
  const pods = podsOf(objects);
  const instance: Endpoint = {
    namespace: DATABASES,
    labels: { 'cnpg.io/cluster': 'srv-a-g1', 'cnpg.io/podRole': 'instance' },
  };
  // CNPG's pod copying a restore's data into the restored Cluster.
  const bootstrap: Endpoint = {
    namespace: DATABASES,
    labels: { 'cnpg.io/cluster': 'srv-b-g2', 'cnpg.io/jobRole': 'full-recovery' },
  };
  assert.ok(RESTORE_OF_LABEL);
  const restoreJob: Endpoint = {
    namespace: DATABASES,
    labels: { 'app.kubernetes.io/managed-by': 'pgcloud', [RESTORE_OF_LABEL]: 'srv-b' },
  };
  const tenantPods = { instance, bootstrap, restoreJob };

  it("keeps the tenants' pods from the metadata address, the broker, the metadata database and pgcloud", () => {
    for (const [name, from] of Object.entries(tenantPods)) {
      for (const port of [80, 443, 8080]) assert.ok(!model.allows(from, METADATA_SERVICE, port));
      assert.ok(!model.allows(from, BROKER, 5672), `${name} reaches the broker`);
      assert.ok(!model.allows(from, BROKER, 5432), `${name} reaches the metadata database`);
      for (const [app, target] of pods)
        for (const port of [8080, 9090, 5672, 5432])
          assert.ok(!model.allows(from, target, port), `${name} reaches ${app}:${port}`);
    }
  });

  it('lets in on 5432 only the apps that log in, CNPG’s pods and labelled client namespaces', () => {
    for (const app of ['database-provisioner', 'backup-service', 'pitr-worker'])
      assert.ok(model.allows(pod(pods, app), instance, 5432), app);
    for (const app of ['api-gateway', 'auth-service', 'project-service'])
      assert.ok(!model.allows(pod(pods, app), instance, 5432), app);
    assert.ok(model.allows(clientPod('shop'), instance, 5432));
    assert.ok(!model.allows(clientPod('elsewhere'), instance, 5432));
    assert.ok(!model.allows(clientPod('shop'), instance, 8000), "the instance manager's port");
    assert.ok(model.allows(clientPod('cnpg-system'), instance, 8000), "CNPG's operator");
    assert.ok(!model.allows({ namespace: DATABASES, labels: {} }, instance, 5432));
    assert.ok(!model.allows(restoreJob, instance, 5432));
  });

  it("serves a restore Job's data to the restored Cluster alone, and lets the Job reach S3", () => {
    const selecting = objects.filter(
      (o) =>
        o.kind === 'NetworkPolicy' &&
        o.metadata.namespace === DATABASES &&
        (o.spec as { policyTypes: string[] }).policyTypes.includes('Ingress') &&
        (o.spec as { ingress?: unknown[] }).ingress !== undefined &&
        matches(
          (o.spec as { podSelector: object }).podSelector,
          (restoreJob as { labels: Record<string, string> }).labels,
        ),
    );
    assert.ok(selecting.length > 0, 'an ingress policy selects restore Job pods');
    assert.ok(model.allows(bootstrap, restoreJob, 5432));
    assert.ok(!model.allows(pod(pods, 'database-provisioner'), restoreJob, 5432));
    assert.ok(!model.allows(clientPod('shop'), restoreJob, 5432));
    assert.ok(model.allows(restoreJob, OBJECT_STORE, 443));
    assert.ok(model.allows(instance, API_SERVER, 443), "CNPG's instance manager");
    assert.ok(model.allows(instance, instance, 5432), 'a replica streams from its primary');
  });

  it('keeps every pgcloud app from the metadata address too', () => {
    for (const [app, from] of pods)
      for (const port of [80, 443, 6443])
        assert.ok(!model.allows(from, METADATA_SERVICE, port), `${app}:${port}`);
  });
});

describe('deploy/kubernetes/overlays/dev: who reaches what', () => {
  const objects = render(join(KUBERNETES_DIR, 'overlays', 'dev'));
  const model = new PolicyModel(objects, { shop: { 'pgcloud.io/database-client': 'allowed' } });
  const pods = podsOf(objects);

  it('lets no pod reach the gateway, which runs the local identity provider', () => {
    const settings = readFileSync(join(KUBERNETES_DIR, 'overlays', 'dev', 'settings.env'), 'utf8');
    assert.match(settings, /^LOCAL_IDP_INSECURE=true$/m);
    const gateway = pod(pods, 'api-gateway');
    assert.ok(!model.allows(clientPod('shop'), gateway, 8080));
    for (const [name, from] of pods)
      if (name !== 'api-gateway') assert.ok(!model.allows(from, gateway, 8080), name);
  });

  it('keeps clients to the database servers: not the broker, the metadata database, S3', () => {
    const client = clientPod('shop');
    assert.ok(model.allows(client, pod(pods, 'database-provisioner'), 20000));
    assert.ok(!model.allows(client, pod(pods, 'rabbitmq'), 5672));
    assert.ok(!model.allows(client, pod(pods, 'postgres'), 5432));
    assert.ok(!model.allows(client, pod(pods, 'minio'), 9000));
    assert.ok(model.allows(pod(pods, 'backup-service'), pod(pods, 'rabbitmq'), 5672));
  });

  it('keeps every pod from the metadata address', () => {
    for (const [name, from] of pods)
      for (const port of [80, 443])
        assert.ok(!model.allows(from, METADATA_SERVICE, port), `${name}:${port}`);
  });
});

describe('deploy/kubernetes/overlays/production: who reaches what', () => {
  const objects = render(join(KUBERNETES_DIR, 'overlays', 'production'));
  const model = new PolicyModel(objects);
  const pods = podsOf(objects);

  it('lets anyone reach the gateway, and no app the metadata address', () => {
    assert.ok(model.allows(clientPod('ingress-nginx'), pod(pods, 'api-gateway'), 8080));
    assert.ok(!model.allows(clientPod('ingress-nginx'), pod(pods, 'auth-service'), 9090));
    for (const [name, from] of pods)
      for (const port of [80, 443, 5432, 5672, 6379])
        assert.ok(!model.allows(from, METADATA_SERVICE, port), `${name}:${port}`);
  });
});

/** A webhook endpoint on the internet. */
const WEBHOOK_TARGET = { address: '93.184.215.14' };
/**
 * Addresses no webhook may reach: private, shared, loopback, link-local (the cloud's
 * metadata service), "this network" and multicast ones.
 */
const PRIVATE_TARGETS = [
  '10.96.0.10',
  '172.16.3.4',
  '192.168.1.10',
  '100.64.0.1',
  '127.0.0.1',
  '169.254.169.254',
  '0.0.0.0',
  '224.0.0.251',
];
/** The apps the production overlays let open HTTPS for their own needs (S3, GitHub, API). */
const HTTPS_APPS = ['auth-service', 'backup-service', 'database-provisioner', 'pitr-worker'];

for (const overlay of ['dev', 'production', 'cnpg']) {
  describe(`deploy/kubernetes/overlays/${overlay}: notification-service's webhooks`, () => {
    const objects = render(join(KUBERNETES_DIR, 'overlays', overlay));
    const model = new PolicyModel(objects, {
      monitoring: { 'pgcloud.io/metrics': 'allowed' },
      shop: { 'pgcloud.io/database-client': 'allowed' },
    });
    const pods = podsOf(objects);
    const notifications = pod(pods, 'notification-service');

    it('reach the internet on 443 only, and never a private or metadata address', () => {
      assert.ok(model.allows(notifications, WEBHOOK_TARGET, 443));
      for (const port of [80, 8443, 25])
        assert.ok(!model.allows(notifications, WEBHOOK_TARGET, port), `port ${port}`);
      for (const address of PRIVATE_TARGETS)
        for (const port of [443, 80, 8080])
          assert.ok(!model.allows(notifications, { address }, port), `${address}:${port}`);
    });

    it('leave notification-service the broker and the metadata database', () => {
      const [broker, database] =
        overlay === 'dev' ? [pod(pods, 'rabbitmq'), pod(pods, 'postgres')] : [BROKER, BROKER];
      assert.ok(model.allows(notifications, broker, 5672));
      assert.ok(model.allows(notifications, database, 5432));
    });

    it('open the internet to no other app but those that need HTTPS anyway', () => {
      const reaching = [...pods]
        .filter(([, from]) => model.allows(from, WEBHOOK_TARGET, 443))
        .map(([name]) => name)
        .sort();
      const expected = overlay === 'dev' ? [] : HTTPS_APPS;
      assert.deepEqual(reaching, [...expected, 'notification-service'].sort());
    });

    it('take nothing in but metrics scraping', () => {
      const monitoring = { namespace: 'monitoring', labels: { app: 'prometheus' } };
      assert.ok(model.allows(monitoring, notifications, 9090));
      assert.ok(!model.allows(monitoring, notifications, 8080));
      assert.ok(!model.allows(clientPod('shop'), notifications, 9090));
      for (const [name, from] of pods)
        if (name !== 'notification-service')
          for (const port of [443, 8080, 9090])
            assert.ok(!model.allows(from, notifications, port), `${name}:${port}`);
    });
  });
}
