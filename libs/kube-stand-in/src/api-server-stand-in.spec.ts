import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import {
  MERGE_PATCH,
  STRATEGIC_MERGE_PATCH,
  rejectsWithStatus,
  startWithClients,
} from './api-server-stand-in.fixtures.js';
import type { StoredObject } from './stored-object.js';

const NS = 'pgcloud-test';
const refuseMarked = (object: StoredObject) =>
  object.metadata.labels?.['test/refuse'] ? ['metadata.labels: refused by the test validator'] : [];

describe('ApiServerStandIn through @kubernetes/client-node: built-in kinds', () => {
  let t: Awaited<ReturnType<typeof startWithClients>>;
  before(async () => (t = await startWithClients(NS, { validate: refuseMarked })));
  after(() => t.api.stop());

  it('creates, reads, lists, replaces, patches (each patch type) and deletes a Secret', async () => {
    const created = await t.core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 's1', labels: { app: 'a' } }, stringData: { password: 'pw' } },
    });
    assert.deepEqual(created.data, { password: Buffer.from('pw').toString('base64') });
    assert.equal(created.type, 'Opaque');
    assert.equal(created.metadata?.generation, 1);
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(created.metadata?.creationTimestamp instanceof Date);
    const read = await t.core.readNamespacedSecret({ name: 's1', namespace: NS });
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);

    read.metadata!.labels = { app: 'a', tier: 'x' };
    const relabelled = await t.core.replaceNamespacedSecret({
      name: 's1',
      namespace: NS,
      body: read,
    });
    assert.equal(relabelled.metadata?.generation, 1, 'labels are not data: no generation bump');
    assert.ok(
      Number(relabelled.metadata?.resourceVersion) > Number(read.metadata?.resourceVersion),
    );
    relabelled.data = { password: Buffer.from('pw2').toString('base64') };
    const replaced = await t.core.replaceNamespacedSecret({
      name: 's1',
      namespace: NS,
      body: relabelled,
    });
    assert.equal(replaced.metadata?.generation, 2);

    const jsonPatched = await t.core.patchNamespacedSecret({
      name: 's1',
      namespace: NS,
      body: [{ op: 'add', path: '/data/user', value: Buffer.from('app').toString('base64') }],
    });
    assert.deepEqual(Object.keys(jsonPatched.data ?? {}).sort(), ['password', 'user']);
    const merged = await t.core.patchNamespacedSecret(
      { name: 's1', namespace: NS, body: { data: { user: null }, stringData: { extra: 'e' } } },
      MERGE_PATCH,
    );
    assert.deepEqual(Object.keys(merged.data ?? {}).sort(), ['extra', 'password']);
    const strategic = await t.core.patchNamespacedSecret(
      { name: 's1', namespace: NS, body: { metadata: { labels: { tier: null } } } },
      STRATEGIC_MERGE_PATCH,
    );
    assert.deepEqual(strategic.metadata?.labels, { app: 'a' });
    assert.deepEqual(
      t.api.requests.filter((r) => r.method === 'PATCH').map((r) => r.contentType),
      [
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/strategic-merge-patch+json',
      ],
    );

    const listed = await t.core.listNamespacedSecret({ namespace: NS });
    assert.deepEqual(
      listed.items.map((s) => s.metadata?.name),
      ['s1'],
    );
    assert.equal(listed.metadata?.resourceVersion, strategic.metadata?.resourceVersion);
    const deleted = await t.core.deleteNamespacedSecret({ name: 's1', namespace: NS });
    assert.equal(deleted.status, 'Success');
    await rejectsWithStatus(
      t.core.readNamespacedSecret({ name: 's1', namespace: NS }),
      404,
      'NotFound',
    );
    await rejectsWithStatus(
      t.core.deleteNamespacedSecret({ name: 's1', namespace: NS }),
      404,
      'NotFound',
    );
    await rejectsWithStatus(
      t.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'bad' }, data: { a: '%%' } },
      }),
      400,
      'BadRequest',
    );
  });

  it('keeps a Service status apart from its spec, and its allocated clusterIP', async () => {
    const created = await t.core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: 'srv-a' },
        spec: {
          type: 'LoadBalancer',
          selector: { role: 'primary' },
          ports: [{ name: 'postgres', port: 5433, targetPort: 5432 }],
        },
        status: { loadBalancer: { ingress: [{ ip: '203.0.113.1' }] } },
      },
    });
    assert.equal(created.status?.loadBalancer?.ingress, undefined, 'status on create is ignored');
    assert.match(created.spec?.clusterIP ?? '', /^10\.96\./);
    const withStatus = await t.core.replaceNamespacedServiceStatus({
      name: 'srv-a',
      namespace: NS,
      body: {
        ...created,
        spec: { ...created.spec, selector: {} },
        status: { loadBalancer: { ingress: [{ ip: '127.0.0.1' }] } },
      },
    });
    assert.deepEqual(
      withStatus.status?.loadBalancer?.ingress?.map((i) => i.ip),
      ['127.0.0.1'],
    );
    assert.deepEqual(
      withStatus.spec?.selector,
      { role: 'primary' },
      'a status write changes only status',
    );
    assert.equal(withStatus.metadata?.generation, 1);

    const { clusterIP: _, clusterIPs: __, ...specWithoutIp } = withStatus.spec ?? {};
    const replaced = await t.core.replaceNamespacedService({
      name: 'srv-a',
      namespace: NS,
      body: {
        ...withStatus,
        spec: { ...specWithoutIp, selector: { role: 'replica' } },
        status: {},
      },
    });
    assert.equal(replaced.spec?.clusterIP, created.spec?.clusterIP);
    assert.deepEqual(
      replaced.status?.loadBalancer?.ingress?.map((i) => i.ip),
      ['127.0.0.1'],
      'kept',
    );
    assert.equal(replaced.metadata?.generation, 2);
    const deleted = await t.core.deleteNamespacedService({ name: 'srv-a', namespace: NS });
    assert.equal(deleted.metadata?.name, 'srv-a', 'services answer the deleted object');
  });

  it('serves Jobs and Pods with their status subresources', async () => {
    await t.batch.createNamespacedJob({
      namespace: NS,
      body: {
        metadata: { name: 'restore-1', labels: { 'pgcloud.dev/server-id': 'srv_1' } },
        spec: {
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'r', image: 'pgcloud' }] },
          },
        },
      },
    });
    const succeeded = await t.batch.patchNamespacedJobStatus(
      {
        name: 'restore-1',
        namespace: NS,
        body: { status: { succeeded: 1 }, spec: { parallelism: 5 } },
      },
      MERGE_PATCH,
    );
    assert.equal(succeeded.status?.succeeded, 1);
    assert.equal(succeeded.spec?.parallelism, 1, 'a status patch leaves spec alone');
    const jobs = await t.batch.listJobForAllNamespaces({
      labelSelector: 'pgcloud.dev/server-id=srv_1',
    });
    assert.deepEqual(
      jobs.items.map((j) => j.metadata?.name),
      ['restore-1'],
    );
    assert.equal(
      (await t.batch.deleteNamespacedJob({ name: 'restore-1', namespace: NS })).status,
      'Success',
    );

    const pod = await t.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'p-1' },
        spec: { containers: [{ name: 'postgres', image: 'pg' }] },
      },
    });
    assert.equal(pod.status?.phase, 'Pending');
    await t.core.patchNamespacedPodStatus(
      { name: 'p-1', namespace: NS, body: { status: { phase: 'Running', podIP: '127.0.0.1' } } },
      MERGE_PATCH,
    );
    const running = await t.core.readNamespacedPodStatus({ name: 'p-1', namespace: NS });
    assert.equal(running.status?.phase, 'Running');
  });

  it('selects by labels (equality, inequality, existence, sets) in a namespace and across them', async () => {
    for (const [name, labels] of [
      ['l1', { role: 'primary', cluster: 'a' }],
      ['l2', { role: 'replica', cluster: 'a' }],
      ['l3', { cluster: 'b' }],
    ] as const) {
      await t.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name, labels } } });
    }
    const names = async (labelSelector: string) =>
      (await t.core.listNamespacedSecret({ namespace: NS, labelSelector })).items.map(
        (s) => s.metadata?.name,
      );
    assert.deepEqual(await names('cluster=a,role=primary'), ['l1']);
    assert.deepEqual(await names('cluster==a,role!=primary'), ['l2']);
    assert.deepEqual(await names('role'), ['l1', 'l2']);
    assert.deepEqual(await names('!role,cluster'), ['l3']);
    assert.deepEqual(await names('cluster in (b, c)'), ['l3']);
    const all = await t.core.listSecretForAllNamespaces({ labelSelector: 'cluster notin (b)' });
    assert.deepEqual(
      all.items.map((s) => s.metadata?.name),
      ['l1', 'l2'],
    );
    await rejectsWithStatus(
      t.core.listNamespacedSecret({ namespace: NS, labelSelector: 'a b' }),
      400,
      'BadRequest',
    );
  });

  it('answers 404 for a write to a namespace that does not exist, and for an unknown path', async () => {
    const status = await rejectsWithStatus(
      t.core.createNamespacedSecret({ namespace: 'nowhere', body: { metadata: { name: 'x' } } }),
      404,
      'NotFound',
    );
    assert.equal(status.message, 'namespaces "nowhere" not found');
    const unknown = await fetch(`${t.api.url}/apis/apps/v1/deployments`, {
      headers: { authorization: `Bearer ${t.api.token}` },
    });
    assert.equal(unknown.status, 404);
  });

  it('answers 401 to a request without the bearer token', async () => {
    const bare = await fetch(`${t.api.url}/api/v1/namespaces`);
    assert.equal(bare.status, 401);
    assert.deepEqual(await bare.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server: t.api.url, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'wrong' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    // client-node's generated code leaves the body out of a 401's ApiException.
    await assert.rejects(config.makeApiClient(CoreV1Api).listNamespace(), { code: 401 });
  });

  it('refuses with 422 what the validate option refuses, on create and on patch', async () => {
    const status = await rejectsWithStatus(
      t.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'v1', labels: { 'test/refuse': 'y' } } },
      }),
      422,
      'Invalid',
    );
    assert.equal(
      status.message,
      'Secret "v1" is invalid: metadata.labels: refused by the test validator',
    );
    await t.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'v2' } } });
    await rejectsWithStatus(
      t.core.patchNamespacedSecret(
        { name: 'v2', namespace: NS, body: { metadata: { labels: { 'test/refuse': 'y' } } } },
        MERGE_PATCH,
      ),
      422,
      'Invalid',
    );
    const kept = await t.core.readNamespacedSecret({ name: 'v2', namespace: NS });
    assert.equal(kept.metadata?.labels, undefined);
    assert.deepEqual(
      t.api
        .objects('Secret', NS)
        .map((s) => s.metadata.name)
        .includes('v1'),
      false,
    );
  });
});
