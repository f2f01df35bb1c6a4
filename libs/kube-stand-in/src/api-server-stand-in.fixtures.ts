import assert from 'node:assert/strict';
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { ApiServerStandIn, type ApiServerStandInOptions } from './api-server-stand-in.js';
import type { StoredObject } from './stored-object.js';

/** The request options that make a client-node patch call send this patch type. */
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const STRATEGIC_MERGE_PATCH = setHeaderOptions(
  'Content-Type',
  PatchStrategy.StrategicMergePatch,
);

/** CustomObjectsApi's coordinates of CNPG Clusters. */
export const CLUSTERS = { group: 'postgresql.cnpg.io', version: 'v1', plural: 'clusters' } as const;

/** A CNPG Cluster body (only a few spec fields: the test API does not check them). */
export function cnpgCluster(name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'postgresql.cnpg.io/v1',
    kind: 'Cluster',
    metadata: { name, labels },
    spec: { instances: 1, storage: { size: '1Gi' } },
  };
}

/** A started test API, client-node clients on its kubeconfig, and a namespace of its own. */
export async function startWithClients(namespace: string, options?: ApiServerStandInOptions) {
  const api = await ApiServerStandIn.start(options);
  const config = await api.kubeConfig();
  const clients = {
    api,
    config,
    core: config.makeApiClient(CoreV1Api),
    batch: config.makeApiClient(BatchV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
  };
  await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
  return clients;
}

/** A CustomObjectsApi answer, typed as the stored object it is. */
export async function asObject(answer: Promise<unknown>): Promise<StoredObject> {
  return (await answer) as StoredObject;
}

/** Asserts that a client-node call fails with this HTTP code and Status reason; answers the Status. */
export async function rejectsWithStatus(call: Promise<unknown>, code: number, reason: string) {
  const error = await call.then(
    () => assert.fail(`expected HTTP ${code} ${reason}, the call succeeded`),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ApiException, `not an ApiException: ${String(error)}`);
  const status = JSON.parse(String(error.body)) as {
    kind: string;
    reason: string;
    code: number;
    message: string;
  };
  assert.deepEqual(
    { httpCode: error.code, kind: status.kind, reason: status.reason, code: status.code },
    { httpCode: code, kind: 'Status', reason, code },
  );
  return status;
}
