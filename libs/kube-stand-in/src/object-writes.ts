import { randomBytes, randomUUID } from 'node:crypto';
import { alreadyExists, badRequest, conflict, invalid, notFound } from './api-status.js';
import type { ObjectDeleter } from './object-deletion.js';
import { isJsonObject, sameJson } from './object-patch.js';
import type { StoredObjects } from './stored-objects.js';
import { resourceType, type ResourceType } from './resource-types.js';
import type { ServerDefaults } from './server-defaults.js';
import type { StoredMetadata, StoredObject } from './stored-object.js';

/** Checks an object before it is stored: its problems, none when valid. */
export type ObjectValidator = (object: StoredObject) => string[];

/** Metadata only the server sets: a client's values are ignored (kept from the stored object). */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
] as const;

/**
 * Creates and updates objects with the API server's rules: the metadata it owns, status
 * apart from the object (for kinds with a status subresource), generation bumped when the
 * spec (a Secret's data) changes, optimistic concurrency on metadata.resourceVersion, no-op
 * updates not written, no new finalizers on an object being deleted (and its removal once
 * they are emptied), server defaults, then the validator on the object as it would be stored.
 */
export class ObjectWriter {
  constructor(
    private readonly store: StoredObjects,
    private readonly deleter: ObjectDeleter,
    private readonly defaults: ServerDefaults,
    private readonly validate?: ObjectValidator,
  ) {}

  create(type: ResourceType, namespace: string | undefined, body: unknown): StoredObject {
    const given = this.checkBody(type, namespace, body);
    if (
      namespace !== undefined &&
      !this.store.find(resourceType('Namespace'), undefined, namespace)
    )
      throw notFound(resourceType('Namespace'), namespace);
    const name = given.metadata.name ?? generatedName(given.metadata.generateName);
    if (!name)
      throw invalid(type, '', ['metadata.name: Required value: name or generateName is required']);
    if (this.store.find(type, namespace, name)) throw alreadyExists(type, name);
    const object = { ...given, apiVersion: type.apiVersion, kind: type.kind } as StoredObject;
    object.metadata = {
      ...clientMetadata(given.metadata),
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      uid: randomUUID(),
      generation: 1,
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    } as StoredMetadata;
    if (type.statusSubresource) {
      delete object.status;
      const status = this.defaults.initialStatus(type);
      if (status) object.status = status;
    }
    this.defaults.apply(type, object);
    this.check(type, object);
    return this.store.write(type, object);
  }

  /**
   * Replaces an object (or, with `status`, only its status) by `body`. `requireVersion`: a
   * PUT of a custom resource must carry metadata.resourceVersion, as the API server asks.
   */
  update(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    { status = false, requireVersion = false } = {},
  ): StoredObject {
    const current = this.store.find(type, namespace, name);
    if (!current) throw notFound(type, name);
    const given = this.checkBody(type, namespace, body);
    if (given.metadata.name !== undefined && given.metadata.name !== name)
      throw badRequest(
        `the name of the object (${given.metadata.name}) does not match the name on the URL (${name})`,
      );
    const version = given.metadata.resourceVersion;
    if (version === undefined && requireVersion)
      throw invalid(type, name, [
        'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      ]);
    if (version !== undefined && version !== current.metadata.resourceVersion)
      throw conflict(type, name);
    const next = status ? statusUpdate(current, given) : this.objectUpdate(type, current, given);
    if (sameJson(next, current)) return current;
    this.check(type, next);
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length)
      return this.deleter.remove(type, next);
    return this.store.write(type, next);
  }

  private objectUpdate(type: ResourceType, current: StoredObject, given: GivenObject) {
    const next = { ...given, apiVersion: type.apiVersion, kind: type.kind } as StoredObject;
    const owned = Object.fromEntries(
      SERVER_METADATA.map((field) => [field, current.metadata[field]]).filter(
        ([, v]) => v !== undefined,
      ),
    ) as Partial<StoredMetadata>;
    next.metadata = {
      ...clientMetadata(given.metadata),
      ...owned,
      name: current.metadata.name,
      ...(current.metadata.namespace !== undefined
        ? { namespace: current.metadata.namespace }
        : {}),
    } as StoredMetadata;
    if (type.statusSubresource) {
      delete next.status;
      if (current.status !== undefined) next.status = current.status;
    }
    if (current.metadata.deletionTimestamp) {
      const before = new Set(current.metadata.finalizers ?? []);
      if ((next.metadata.finalizers ?? []).some((f) => !before.has(f)))
        throw invalid(type, current.metadata.name, [
          'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted',
        ]);
    }
    this.defaults.apply(type, next, current);
    if (!sameJson(next[type.generationField], current[type.generationField]))
      next.metadata.generation = current.metadata.generation + 1;
    return next;
  }

  private check(type: ResourceType, object: StoredObject): void {
    const problems = this.validate?.(structuredClone(object)) ?? [];
    if (problems.length > 0) throw invalid(type, object.metadata.name, problems);
  }

  private checkBody(type: ResourceType, namespace: string | undefined, body: unknown): GivenObject {
    if (!isJsonObject(body)) throw badRequest('the request body must be a JSON object');
    if (body.apiVersion !== undefined && body.apiVersion !== type.apiVersion)
      throw badRequest(
        `the API version in the data (${JSON.stringify(body.apiVersion)}) does not match the expected API version (${type.apiVersion})`,
      );
    if (body.kind !== undefined && body.kind !== type.kind)
      throw badRequest(`the kind in the data (${JSON.stringify(body.kind)}) is not ${type.kind}`);
    const metadata = structuredClone(body.metadata ?? {});
    if (!isJsonObject(metadata)) throw badRequest('metadata must be an object');
    if (!type.namespaced) delete metadata.namespace; // cluster-scoped: the server clears it
    for (const field of ['name', 'namespace', 'resourceVersion']) {
      if (metadata[field] !== undefined && typeof metadata[field] !== 'string')
        throw badRequest(`metadata.${field} must be a string`);
    }
    if (metadata.namespace !== undefined && metadata.namespace !== namespace)
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    return { ...body, metadata };
  }
}

type GivenObject = Record<string, unknown> & {
  metadata: Record<string, unknown> & { name?: string; resourceVersion?: string };
};

function clientMetadata(metadata: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(metadata);
  for (const field of SERVER_METADATA) delete copy[field];
  return copy;
}

function statusUpdate(current: StoredObject, given: GivenObject): StoredObject {
  const next = structuredClone(current);
  delete next.status;
  if (given.status !== undefined) next.status = given.status;
  return next;
}

function generatedName(prefix: unknown): string | undefined {
  if (typeof prefix !== 'string' || prefix === '') return undefined;
  const suffix = [...randomBytes(5)].map((b) => 'bcdfghjklmnpqrstvwxz2456789'[b % 27]).join('');
  return prefix + suffix;
}
