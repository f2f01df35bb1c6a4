import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ApiException, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';

/** Which object: enough to read, patch or delete it. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** Who writes pgcloud's changes, in the objects' managedFields. */
const FIELD_MANAGER = 'pgcloud-provisioner';

/**
 * The Kubernetes API as the driver uses it: any kind through one client (built-in kinds
 * and CNPG's Cluster alike), with a missing object answered as undefined rather than an
 * error, and creates that find the object there already answering it.
 */
export class KubeObjects {
  private readonly api: KubernetesObjectApi;

  constructor(kubeConfig: KubeConfig) {
    this.api = KubernetesObjectApi.makeApiClient(kubeConfig);
  }

  /** The object, or undefined when there is none. */
  async get<T extends KubernetesObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.api.read<T>(header(ref));
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw err;
    }
  }

  /** Creates the object; when one of that name exists already, answers it unchanged. */
  async createOrGet<T extends KubernetesObject>(object: T): Promise<T> {
    try {
      return await this.api.create<T>(object, undefined, undefined, FIELD_MANAGER);
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
      const found = await this.get<T>(refOf(object));
      if (!found) throw err;
      return found;
    }
  }

  /**
   * A JSON merge patch (RFC 7386): maps merge, lists and values replace, null removes.
   * With `resourceVersion`, only when the object has not changed since (409 otherwise).
   */
  async mergePatch<T extends KubernetesObject>(
    ref: ObjectRef,
    patch: Record<string, unknown>,
    resourceVersion?: string,
  ): Promise<T> {
    const metadata = {
      ...((patch.metadata as Record<string, unknown> | undefined) ?? {}),
      name: ref.name,
      namespace: ref.namespace,
      ...(resourceVersion ? { resourceVersion } : {}),
    };
    const body = { ...patch, apiVersion: ref.apiVersion, kind: ref.kind, metadata };
    return this.api.patch<T>(
      body as T,
      undefined,
      undefined,
      FIELD_MANAGER,
      undefined,
      PatchStrategy.MergePatch,
    );
  }

  /**
   * Deletes the object; nothing when it is gone. `Foreground`: it stays until its dependents
   * (a Cluster's pods) are gone; `Background`: it goes at once, they after.
   */
  async delete(ref: ObjectRef, propagation: 'Foreground' | 'Background' = 'Background') {
    try {
      await this.api.delete(header(ref), undefined, undefined, undefined, undefined, propagation);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }

  /** The objects of a kind in a namespace that carry every label of `labels`. */
  async list<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    labels: Record<string, string>,
  ): Promise<T[]> {
    const selector = Object.entries(labels)
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    const found = await this.api.list<T>(
      apiVersion,
      kind,
      namespace,
      undefined,
      undefined,
      undefined,
      undefined,
      selector,
    );
    return found.items;
  }
}

/** The reference of an object built by the driver. */
export function refOf(object: KubernetesObject): ObjectRef {
  const { apiVersion, kind, metadata } = object;
  if (!apiVersion || !kind || !metadata?.name || !metadata.namespace)
    throw new Error('an object without apiVersion, kind, name or namespace');
  return { apiVersion, kind, namespace: metadata.namespace, name: metadata.name };
}

/** Whether `err` is the API's answer with that HTTP status. */
export function isStatus(err: unknown, code: number): boolean {
  return err instanceof ApiException && err.code === code;
}

function header(ref: ObjectRef): KubernetesObject & { metadata: { name: string } } {
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.name, namespace: ref.namespace },
  };
}
