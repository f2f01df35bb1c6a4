import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADD, DELETE, UPDATE, Watch, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { eventually } from '@pgcloud/testing';
import {
  CLUSTERS,
  MERGE_PATCH,
  asObject,
  cnpgCluster,
  rejectsWithStatus,
  startWithClients,
} from './api-server-stand-in.fixtures.js';
import type { StoredObject } from './stored-object.js';

const NS = 'pgcloud-lifecycle';
const CLUSTER_PATH = `/apis/postgresql.cnpg.io/v1/namespaces/${NS}/clusters`;
const soon = { timeoutMs: 5_000, intervalMs: 20 };

describe('ApiServerStandIn through @kubernetes/client-node: watches, garbage collection, finalizers', () => {
  let t: Awaited<ReturnType<typeof startWithClients>>;
  before(async () => (t = await startWithClients(NS)));
  after(() => t.api.stop());

  const createCluster = (name: string, extra: Record<string, unknown> = {}) => {
    const body = cnpgCluster(name, { watched: 'yes' });
    return asObject(
      t.custom.createNamespacedCustomObject({
        ...CLUSTERS,
        namespace: NS,
        body: { ...body, metadata: { ...body.metadata, ...extra } },
      }),
    );
  };
  const patchCluster = (name: string, body: unknown) =>
    asObject(
      t.custom.patchNamespacedCustomObject({ ...CLUSTERS, namespace: NS, name, body }, MERGE_PATCH),
    );
  const deleteCluster = (name: string, propagationPolicy?: string) =>
    asObject(
      t.custom.deleteNamespacedCustomObject({
        ...CLUSTERS,
        namespace: NS,
        name,
        propagationPolicy,
      }),
    );
  const ownedBy = (owner: StoredObject) => ({
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
  });
  const createPod = (name: string, owners: StoredObject[]): Promise<V1Pod> =>
    t.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name, ownerReferences: owners.map(ownedBy) },
        spec: { containers: [{ name: 'postgres', image: 'pg' }] },
      },
    });
  const podNames = () => t.api.objects('Pod', NS).map((p) => p.metadata.name);

  it('streams ADDED, MODIFIED and DELETED to client-node Watch, from a resourceVersion or from now', async () => {
    const seen: string[] = [];
    const watch = new Watch(t.config);
    const { resourceVersion } = (
      (await t.custom.listNamespacedCustomObject({ ...CLUSTERS, namespace: NS })) as {
        metadata: { resourceVersion: string };
      }
    ).metadata;
    let ended: unknown = 'open';
    const controller = await watch.watch(
      CLUSTER_PATH,
      { labelSelector: 'watched=yes', resourceVersion },
      (type: string, object: StoredObject) => seen.push(`${type} ${object.metadata.name}`),
      (err: unknown) => (ended = err),
    );
    await createCluster('srv-w-g1');
    await patchCluster('srv-w-g1', { spec: { instances: 2 } });
    await patchCluster('srv-w-g1', { metadata: { labels: { watched: null } } });
    await patchCluster('srv-w-g1', { metadata: { labels: { watched: 'yes' } } });
    await deleteCluster('srv-w-g1');
    const expected = ['ADDED', 'MODIFIED', 'DELETED', 'ADDED', 'DELETED'].map(
      (type) => `${type} srv-w-g1`,
    );
    await eventually(() => assert.deepEqual(seen, expected), soon);

    const replayed: string[] = [];
    const replay = await watch.watch(
      CLUSTER_PATH,
      { labelSelector: 'watched=yes', resourceVersion },
      (type: string, object: StoredObject) => replayed.push(`${type} ${object.metadata.name}`),
      () => undefined,
    );
    await eventually(() => assert.deepEqual(replayed, expected), soon);
    assert.equal(ended, 'open', 'the server keeps the stream open');
    replay.abort();
    controller.abort();

    await createCluster('srv-w-g2');
    const fromNow: string[] = [];
    const current = await watch.watch(
      CLUSTER_PATH,
      {},
      (type: string, object: StoredObject) => fromNow.push(`${type} ${object.metadata.name}`),
      () => undefined,
    );
    await deleteCluster('srv-w-g2');
    await eventually(() => assert.deepEqual(fromNow, ['ADDED srv-w-g2', 'DELETED srv-w-g2']), soon);
    current.abort();
  });

  it("feeds a client-node informer: its list, then the watch from the list's version", async () => {
    await createCluster('srv-i-g1');
    const informer = makeInformer(t.config, '/apis/postgresql.cnpg.io/v1/clusters', () =>
      t.custom.listClusterCustomObject({ ...CLUSTERS }),
    );
    const seen: string[] = [];
    for (const event of [ADD, UPDATE, DELETE] as const)
      informer.on(event, (object) => seen.push(`${event} ${object.metadata?.name}`));
    await informer.start();
    await patchCluster('srv-i-g1', { spec: { instances: 2 } });
    await deleteCluster('srv-i-g1');
    await eventually(
      () => assert.deepEqual(seen, ['add srv-i-g1', 'update srv-i-g1', 'delete srv-i-g1']),
      soon,
    );
    await informer.stop();
  });

  it('deletes what a deleted Cluster owns, recursively, keeping dependents another owner holds', async () => {
    const cluster = await createCluster('srv-gc-g1');
    const other = await createCluster('srv-gc-g2');
    const pod = await createPod('srv-gc-g1-1', [cluster]);
    await t.core.createNamespacedSecret({
      namespace: NS,
      body: {
        metadata: {
          name: 'owned-by-pod',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name!, uid: pod.metadata!.uid! },
          ],
        },
      },
    });
    await createPod('shared', [cluster, other]);
    await deleteCluster('srv-gc-g1');
    assert.deepEqual(podNames(), ['shared']);
    assert.deepEqual(t.api.objects('Secret', NS), []);
    const shared = await t.core.readNamespacedPod({ name: 'shared', namespace: NS });
    assert.deepEqual(
      shared.metadata?.ownerReferences?.map((r) => r.name),
      ['srv-gc-g2'],
    );

    await deleteCluster('srv-gc-g2', 'Orphan');
    const orphan = await t.core.readNamespacedPod({ name: 'shared', namespace: NS });
    assert.equal(orphan.metadata?.ownerReferences, undefined, 'orphaned, not deleted');
    await t.core.deleteNamespacedPod({ name: 'shared', namespace: NS });
  });

  it('keeps an object with finalizers until they are emptied, then removes it and its dependents', async () => {
    const cluster = await createCluster('srv-f-g1', { finalizers: ['cnpg.io/test'] });
    await createPod('srv-f-g1-1', [cluster]);
    const deleting = await deleteCluster('srv-f-g1');
    assert.ok(deleting.metadata.deletionTimestamp, 'marked for deletion');
    assert.equal(deleting.metadata.generation, 2);
    assert.deepEqual(podNames(), ['srv-f-g1-1'], 'dependents wait for the owner to go');
    await rejectsWithStatus(
      patchCluster('srv-f-g1', { metadata: { finalizers: ['cnpg.io/test', 'more'] } }),
      422,
      'Invalid',
    );
    const again = await deleteCluster('srv-f-g1');
    assert.equal(
      again.metadata.resourceVersion,
      deleting.metadata.resourceVersion,
      'a second delete changes nothing',
    );

    await patchCluster('srv-f-g1', { metadata: { finalizers: null } });
    await rejectsWithStatus(
      t.custom.getNamespacedCustomObject({ ...CLUSTERS, namespace: NS, name: 'srv-f-g1' }),
      404,
      'NotFound',
    );
    assert.deepEqual(podNames(), []);
  });

  it('answers a watch from a forgotten resourceVersion with 410 Expired, and ends it', async () => {
    const short = await startWithClients('short', { watchHistory: 2 });
    try {
      const { resourceVersion } = (await short.core.listNamespacedSecret({ namespace: 'short' }))
        .metadata!;
      for (const name of ['a', 'b', 'c'])
        await short.core.createNamespacedSecret({
          namespace: 'short',
          body: { metadata: { name } },
        });
      const seen: [string, number][] = [];
      let ended: unknown = 'open';
      await new Watch(short.config).watch(
        '/api/v1/namespaces/short/secrets',
        { resourceVersion },
        (type: string, object: { code: number }) => seen.push([type, object.code]),
        (err: unknown) => (ended = err),
      );
      await eventually(() => assert.equal(ended, null), soon);
      assert.deepEqual(seen, [['ERROR', 410]]);
    } finally {
      await short.api.stop();
    }
  });

  it('deletes a namespace with what is in it; stop() ends the open watches', async () => {
    await t.core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await t.core.createNamespacedSecret({ namespace: 'doomed', body: { metadata: { name: 's' } } });
    await t.core.deleteNamespace({ name: 'doomed' });
    assert.deepEqual(t.api.objects('Secret', 'doomed'), []);
    await rejectsWithStatus(t.core.readNamespace({ name: 'doomed' }), 404, 'NotFound');

    const other = await startWithClients('elsewhere');
    let ended: unknown = 'open';
    await new Watch(other.config).watch(
      '/api/v1/pods',
      {},
      () => undefined,
      (err: unknown) => (ended = err),
    );
    await other.api.stop();
    await eventually(() => assert.equal(ended, null), soon);
  });
});
