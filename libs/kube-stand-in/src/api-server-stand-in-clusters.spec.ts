import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubernetesObjectApi } from '@kubernetes/client-node';
import {
  CLUSTERS,
  MERGE_PATCH,
  STRATEGIC_MERGE_PATCH,
  asObject,
  cnpgCluster,
  rejectsWithStatus,
  startWithClients,
} from './api-server-stand-in.fixtures.js';

const NS = 'pgcloud-clusters';

describe('ApiServerStandIn through @kubernetes/client-node: CNPG Clusters, conflicts, status', () => {
  let t: Awaited<ReturnType<typeof startWithClients>>;
  before(async () => (t = await startWithClients(NS)));
  after(() => t.api.stop());

  const get = (name: string) =>
    asObject(t.custom.getNamespacedCustomObject({ ...CLUSTERS, namespace: NS, name }));
  const patch = (name: string, body: unknown, options = MERGE_PATCH) =>
    asObject(
      t.custom.patchNamespacedCustomObject({ ...CLUSTERS, namespace: NS, name, body }, options),
    );

  it('creates, reads, lists (here and across namespaces), replaces, patches and deletes a Cluster', async () => {
    const created = await asObject(
      t.custom.createNamespacedCustomObject({
        ...CLUSTERS,
        namespace: NS,
        body: cnpgCluster('srv-a-g1'),
      }),
    );
    assert.equal(created.metadata.generation, 1);
    await rejectsWithStatus(
      t.custom.createNamespacedCustomObject({
        ...CLUSTERS,
        namespace: NS,
        body: cnpgCluster('srv-a-g1'),
      }),
      409,
      'AlreadyExists',
    );
    const listed = (await t.custom.listNamespacedCustomObject({ ...CLUSTERS, namespace: NS })) as {
      kind: string;
      items: { kind: string; metadata: { name: string } }[];
    };
    assert.equal(listed.kind, 'ClusterList');
    assert.deepEqual(
      listed.items.map((c) => [c.kind, c.metadata.name]),
      [['Cluster', 'srv-a-g1']],
    );
    const everywhere = (await t.custom.listClusterCustomObject({ ...CLUSTERS })) as {
      items: unknown[];
    };
    assert.equal(everywhere.items.length, 1);

    const current = await get('srv-a-g1');
    const replaced = await asObject(
      t.custom.replaceNamespacedCustomObject({
        ...CLUSTERS,
        namespace: NS,
        name: 'srv-a-g1',
        body: { ...current, spec: { instances: 3, storage: { size: '2Gi' } } },
      }),
    );
    assert.deepEqual(replaced.spec, { instances: 3, storage: { size: '2Gi' } });
    assert.equal(replaced.metadata.generation, 2);
    const { resourceVersion: _, ...withoutVersion } = replaced.metadata;
    await rejectsWithStatus(
      t.custom.replaceNamespacedCustomObject({
        ...CLUSTERS,
        namespace: NS,
        name: 'srv-a-g1',
        body: { ...replaced, metadata: withoutVersion },
      }),
      422,
      'Invalid',
    );

    const merged = await patch('srv-a-g1', { spec: { postgresql: { parameters: { a: '1' } } } });
    assert.deepEqual(merged.spec, {
      instances: 3,
      storage: { size: '2Gi' },
      postgresql: { parameters: { a: '1' } },
    });
    const jsonPatched = await patch(
      'srv-a-g1',
      [
        { op: 'test', path: '/spec/instances', value: 3 },
        { op: 'replace', path: '/spec/instances', value: 1 },
      ],
      {},
    );
    assert.equal((jsonPatched.spec as { instances: number }).instances, 1);
    assert.equal(jsonPatched.metadata.generation, 4);
    await rejectsWithStatus(
      patch('srv-a-g1', [{ op: 'test', path: '/spec/instances', value: 9 }], {}),
      422,
      'Invalid',
    );
    await rejectsWithStatus(
      patch('srv-a-g1', { spec: { instances: 2 } }, STRATEGIC_MERGE_PATCH),
      415,
      'UnsupportedMediaType',
    );

    const deleted = await asObject(
      t.custom.deleteNamespacedCustomObject({ ...CLUSTERS, namespace: NS, name: 'srv-a-g1' }),
    );
    assert.equal(deleted.metadata.name, 'srv-a-g1');
    await rejectsWithStatus(get('srv-a-g1'), 404, 'NotFound');
  });

  it('writes status only through /status, without a generation bump', async () => {
    const created = await asObject(
      t.custom.createNamespacedCustomObject({
        ...CLUSTERS,
        namespace: NS,
        body: { ...cnpgCluster('srv-b-g1'), status: { phase: 'made up by the client' } },
      }),
    );
    assert.equal(created.status, undefined);
    const healthy = {
      phase: 'Cluster in healthy state',
      readyInstances: 1,
      currentPrimary: 'srv-b-g1-1',
    };
    const withStatus = await asObject(
      t.custom.replaceNamespacedCustomObjectStatus({
        ...CLUSTERS,
        namespace: NS,
        name: 'srv-b-g1',
        body: { ...created, spec: { instances: 7 }, status: healthy },
      }),
    );
    assert.deepEqual(withStatus.status, healthy);
    assert.deepEqual(withStatus.spec, created.spec, 'a status write ignores spec');
    assert.equal(withStatus.metadata.generation, 1);
    const patched = await asObject(
      t.custom.patchNamespacedCustomObjectStatus(
        { ...CLUSTERS, namespace: NS, name: 'srv-b-g1', body: { status: { readyInstances: 0 } } },
        MERGE_PATCH,
      ),
    );
    assert.deepEqual(patched.status, { ...healthy, readyInstances: 0 });
    const specPatched = await patch('srv-b-g1', {
      spec: { instances: 2 },
      status: { phase: 'ignored' },
    });
    assert.deepEqual(specPatched.status, patched.status, 'a write to the object ignores status');
    assert.equal(specPatched.metadata.generation, 2);
    const same = await patch('srv-b-g1', { spec: { instances: 2 } });
    assert.equal(
      same.metadata.resourceVersion,
      specPatched.metadata.resourceVersion,
      'a no-op is not written',
    );
  });

  it('answers 409 Conflict to a stale resourceVersion and to failNextWrite, once', async () => {
    await t.custom.createNamespacedCustomObject({
      ...CLUSTERS,
      namespace: NS,
      body: cnpgCluster('srv-c-g1'),
    });
    const stale = await get('srv-c-g1');
    await patch('srv-c-g1', { metadata: { annotations: { 'cnpg.io/hibernation': 'off' } } });
    const status = await rejectsWithStatus(
      t.custom.replaceNamespacedCustomObject({
        ...CLUSTERS,
        namespace: NS,
        name: 'srv-c-g1',
        body: stale,
      }),
      409,
      'Conflict',
    );
    assert.match(status.message, /the object has been modified/);
    await rejectsWithStatus(
      patch('srv-c-g1', {
        metadata: { resourceVersion: stale.metadata.resourceVersion },
        spec: { instances: 2 },
      }),
      409,
      'Conflict',
    );
    await rejectsWithStatus(
      t.custom.replaceNamespacedCustomObjectStatus({
        ...CLUSTERS,
        namespace: NS,
        name: 'srv-c-g1',
        body: stale,
      }),
      409,
      'Conflict',
    );

    t.api.failNextWrite('Cluster', 'srv-c-g1');
    await rejectsWithStatus(patch('srv-c-g1', { spec: { instances: 2 } }), 409, 'Conflict');
    assert.equal(
      ((await get('srv-c-g1')).spec as { instances: number }).instances,
      1,
      'not written',
    );
    const retried = await patch('srv-c-g1', { spec: { instances: 2 } });
    assert.equal((retried.spec as { instances: number }).instances, 2);
    t.api.failNextWrite('Secret', 'srv-c-app', 503);
    await rejectsWithStatus(
      t.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'srv-c-app' } } }),
      503,
      'ServiceUnavailable',
    );
    await t.core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'srv-c-app' } },
    });
    assert.deepEqual(
      t.api.objects('Cluster', NS).map((c) => c.metadata.name),
      ['srv-b-g1', 'srv-c-g1'],
    );
  });

  it('serves the discovery that KubernetesObjectApi reads', async () => {
    await t.custom.createNamespacedCustomObject({
      ...CLUSTERS,
      namespace: NS,
      body: cnpgCluster('srv-d-g1'),
    });
    const objects = KubernetesObjectApi.makeApiClient(t.config);
    const read = await objects.read({
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Cluster',
      metadata: { name: 'srv-d-g1', namespace: NS },
    });
    assert.equal(read.metadata?.name, 'srv-d-g1');
    assert.ok(
      t.api.requests.some((r) => r.method === 'GET' && r.path === '/apis/postgresql.cnpg.io/v1'),
    );
  });
});
