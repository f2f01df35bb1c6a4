import { badRequest, notFound } from './api-status.js';
import type { StoredObjects } from './stored-objects.js';
import { RESOURCE_TYPES, type ResourceType } from './resource-types.js';
import type { StoredObject } from './stored-object.js';

/** DeleteOptions.propagationPolicy. Foreground is served as Background (see ObjectDeleter). */
export type Propagation = 'Background' | 'Foreground' | 'Orphan';

/** A delete's outcome: the object, and whether it is gone or waits for its finalizers. */
export interface Deletion {
  object: StoredObject;
  removed: boolean;
}

/**
 * Deletes as the API server and its garbage collector do, but at once rather than in the
 * background: an object with finalizers gets deletionTimestamp (and a generation bump) and
 * stays until an update empties them; removing an object deletes its dependents (objects
 * whose ownerReferences name its uid, recursively, each honouring its own finalizers) or,
 * for dependents with another owner still present, drops only the dangling reference.
 * Orphan propagation drops the references instead. Foreground is served as Background: the
 * owner goes first, then its dependents. Deleting a Namespace deletes what is in it, then
 * the Namespace (which does not wait in Terminating for finalizers of its contents).
 */
export class ObjectDeleter {
  /** The propagation asked for by deletes that wait for finalizers, by uid. */
  private readonly pending = new Map<string, Propagation>();

  constructor(private readonly store: StoredObjects) {}

  delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    propagation: Propagation,
  ) {
    const current = this.store.find(type, namespace, name);
    if (!current) throw notFound(type, name);
    if (current.metadata.deletionTimestamp) return { object: current, removed: false };
    if (type.kind === 'Namespace') this.deleteContents(name);
    if (current.metadata.finalizers?.length) {
      this.pending.set(current.metadata.uid, propagation);
      current.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      current.metadata.deletionGracePeriodSeconds = 0;
      current.metadata.generation += 1;
      return { object: this.store.write(type, current), removed: false };
    }
    return { object: this.remove(type, current, propagation), removed: true };
  }

  /** Removes an object whose deletion no longer waits for anything, then collects dependents. */
  remove(type: ResourceType, object: StoredObject, propagation?: Propagation): StoredObject {
    const uid = object.metadata.uid;
    const policy = propagation ?? this.pending.get(uid) ?? 'Background';
    this.pending.delete(uid);
    const removed = this.store.remove(type, object);
    this.collectDependents(uid, policy === 'Orphan');
    return removed;
  }

  private collectDependents(ownerUid: string, orphan: boolean): void {
    for (const type of RESOURCE_TYPES) {
      for (const snapshot of this.store.list(type)) {
        if (!snapshot.metadata.ownerReferences?.some((ref) => ref.uid === ownerUid)) continue;
        const dependent = this.store.find(
          type,
          snapshot.metadata.namespace,
          snapshot.metadata.name,
        );
        if (!dependent) continue; // collected meanwhile, as another's dependent
        const owners = dependent.metadata.ownerReferences ?? [];
        const remaining = owners.filter(
          (ref) => ref.uid !== ownerUid && this.store.hasUid(ref.uid),
        );
        if (orphan || remaining.length > 0) {
          const kept = owners.filter((ref) => ref.uid !== ownerUid);
          dependent.metadata.ownerReferences = orphan ? kept : remaining;
          if (dependent.metadata.ownerReferences.length === 0)
            delete dependent.metadata.ownerReferences;
          this.store.write(type, dependent);
        } else {
          this.delete(type, dependent.metadata.namespace, dependent.metadata.name, 'Background');
        }
      }
    }
  }

  private deleteContents(namespace: string): void {
    for (const type of RESOURCE_TYPES.filter((t) => t.namespaced)) {
      for (const object of this.store.list(type, namespace)) {
        if (this.store.find(type, namespace, object.metadata.name))
          this.delete(type, namespace, object.metadata.name, 'Background');
      }
    }
  }
}

/** The propagation policy of a DELETE, from its query or its DeleteOptions body. */
export function propagationOf(query: URLSearchParams, body: unknown): Propagation {
  const options = (typeof body === 'object' && body !== null ? body : {}) as Record<
    string,
    unknown
  >;
  const asked = query.get('propagationPolicy') ?? options.propagationPolicy;
  const orphan = query.get('orphanDependents') ?? options.orphanDependents;
  if (asked === undefined || asked === null)
    return orphan === true || orphan === 'true' ? 'Orphan' : 'Background';
  if (asked === 'Background' || asked === 'Foreground' || asked === 'Orphan') return asked;
  throw badRequest(
    `propagationPolicy ${JSON.stringify(asked)} is not one of Background, Foreground, Orphan`,
  );
}
