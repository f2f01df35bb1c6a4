import type { ApiServerStandInKind, ResourceType } from './resource-types.js';
import type { StoredObject, WatchEventType } from './stored-object.js';

/** One change, as watches replay and stream it. */
export interface StoreEvent {
  type: WatchEventType;
  resourceType: ResourceType;
  /** The object after the change (for DELETED: as it was removed, with the deletion's version). */
  object: StoredObject;
  /** The object before a MODIFIED change: a watch with a selector turns leaving it into DELETED. */
  previous?: StoredObject;
  resourceVersion: number;
}

/**
 * The objects in memory and the one resourceVersion counter that every change takes the next
 * value of (as etcd's revision), with the recent changes kept for watches. It stores what it
 * is given: the rules of a write (metadata, status, finalizers, validation) are the callers'.
 */
export class StoredObjects {
  private version = 0;
  private readonly byKind = new Map<ApiServerStandInKind, Map<string, StoredObject>>();
  private readonly history: StoreEvent[] = [];
  /** Changes up to this version are no longer in `history`. */
  private forgottenThrough = 0;
  private readonly listeners = new Set<(event: StoreEvent) => void>();

  /** `historyLimit`: how many changes are kept for watches that resume from a resourceVersion. */
  constructor(private readonly historyLimit: number) {}

  /** The version of the last change, as list answers carry it. */
  get resourceVersion(): string {
    return String(this.version);
  }

  find(type: ResourceType, namespace: string | undefined, name: string): StoredObject | undefined {
    const found = this.kind(type.kind).get(key(namespace, name));
    return found && structuredClone(found);
  }

  /** The objects of a kind (in one namespace when given), by namespace and name. */
  list(type: ResourceType, namespace?: string): StoredObject[] {
    return [...this.kind(type.kind).values()]
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .sort((a, b) => key(a).localeCompare(key(b)))
      .map((o) => structuredClone(o));
  }

  /** Whether any kind holds an object with this uid (an owner that still exists). */
  hasUid(uid: string): boolean {
    return [...this.byKind.values()].some((objects) =>
      [...objects.values()].some((o) => o.metadata.uid === uid),
    );
  }

  /** Stores `object` with the next resourceVersion (ADDED when it is new, else MODIFIED). */
  write(type: ResourceType, object: StoredObject): StoredObject {
    const objects = this.kind(type.kind);
    const previous = objects.get(key(object));
    const stored = structuredClone(object);
    stored.metadata.resourceVersion = String(++this.version);
    objects.set(key(stored), stored);
    this.emit({
      type: previous ? 'MODIFIED' : 'ADDED',
      resourceType: type,
      object: structuredClone(stored),
      ...(previous ? { previous } : {}),
      resourceVersion: this.version,
    });
    return structuredClone(stored);
  }

  /** Removes `object`, which takes the next resourceVersion in its DELETED event. */
  remove(type: ResourceType, object: StoredObject): StoredObject {
    const removed = structuredClone(object);
    this.kind(type.kind).delete(key(object));
    removed.metadata.resourceVersion = String(++this.version);
    this.emit({
      type: 'DELETED',
      resourceType: type,
      object: structuredClone(removed),
      resourceVersion: this.version,
    });
    return removed;
  }

  /** The changes after `version`, or undefined when some of them are no longer kept. */
  changesAfter(version: number): StoreEvent[] | undefined {
    if (version < this.forgottenThrough) return undefined;
    return this.history.filter((event) => event.resourceVersion > version);
  }

  /** Calls `listener` on every change from now on; answers the unsubscribe. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    if (this.history.length > this.historyLimit)
      this.forgottenThrough = this.history.shift()!.resourceVersion;
    for (const listener of this.listeners) listener(event);
  }

  private kind(kind: ApiServerStandInKind): Map<string, StoredObject> {
    let objects = this.byKind.get(kind);
    if (!objects) this.byKind.set(kind, (objects = new Map<string, StoredObject>()));
    return objects;
  }
}

function key(objectOrNamespace: StoredObject | string | undefined, name?: string): string {
  if (typeof objectOrNamespace === 'object')
    return `${objectOrNamespace.metadata.namespace ?? ''}/${objectOrNamespace.metadata.name}`;
  return `${objectOrNamespace ?? ''}/${name}`;
}
