import { ApiStatusError, notFound } from './api-status.js';
import { propagationOf, type ObjectDeleter } from './object-deletion.js';
import { applyPatch, PATCH_CONTENT_TYPES, type PatchType } from './object-patch.js';
import type { StoredObjects } from './stored-objects.js';
import type { ObjectWriter } from './object-writes.js';
import type { ResourcePath } from './resource-paths.js';
import type { ResourceType } from './resource-types.js';
import { fieldFilter, labelFilter } from './selectors.js';

/** A parsed request to a resource path (watches excepted: they stream). */
export interface ResourceRequest {
  method: string;
  path: ResourcePath;
  query: URLSearchParams;
  /** The media type of the body, without parameters. */
  contentType: string;
  body: unknown;
}

/** The HTTP code and JSON body of an answer. */
export interface ApiAnswer {
  code: number;
  body: unknown;
}

/** Serves get, list, create, replace, patch and delete of objects and their status. */
export class ResourceHandlers {
  constructor(
    private readonly store: StoredObjects,
    private readonly writer: ObjectWriter,
    private readonly deleter: ObjectDeleter,
  ) {}

  handle(request: ResourceRequest): ApiAnswer {
    if (request.query.has('dryRun')) throw notServed('dryRun');
    return request.path.name === undefined
      ? this.collection(request)
      : this.item(request, request.path.name);
  }

  private collection({ method, path, query, contentType, body }: ResourceRequest): ApiAnswer {
    const { type, namespace } = path;
    if (method === 'GET') return { code: 200, body: this.list(path, query) };
    // POST to a list across namespaces is not a create: it has no namespace to create in.
    if (method !== 'POST' || (namespace === undefined && type.namespaced))
      throw methodNotAllowed(method);
    requireJson(contentType);
    return { code: 201, body: this.writer.create(type, namespace, body) };
  }

  private item(
    { method, path, query, contentType, body }: ResourceRequest,
    name: string,
  ): ApiAnswer {
    const { type, namespace, status } = path;
    switch (method) {
      case 'GET': {
        const found = this.store.find(type, namespace, name);
        if (!found) throw notFound(type, name);
        return { code: 200, body: found };
      }
      case 'PUT': {
        requireJson(contentType);
        const options = { status, requireVersion: type.custom };
        return { code: 200, body: this.writer.update(type, namespace, name, body, options) };
      }
      case 'PATCH': {
        const current = this.store.find(type, namespace, name);
        if (!current) throw notFound(type, name);
        const patched = applyPatch(current, body, patchTypeOf(type, contentType));
        return { code: 200, body: this.writer.update(type, namespace, name, patched, { status }) };
      }
      case 'DELETE': {
        if (status) throw methodNotAllowed(method);
        const propagation = propagationOf(query, body);
        const { object, removed } = this.deleter.delete(type, namespace, name, propagation);
        if (!removed || type.answersDeletedObject) return { code: 200, body: object };
        return { code: 200, body: deletedStatus(type, name, object.metadata.uid) };
      }
      default:
        throw methodNotAllowed(method);
    }
  }

  private list(path: ResourcePath, query: URLSearchParams) {
    const { type, namespace } = path;
    const byLabels = labelFilter(query.get('labelSelector'));
    const byFields = fieldFilter(query.get('fieldSelector'));
    const items = this.store
      .list(type, namespace)
      .filter((object) => byLabels(object) && byFields(object))
      // The API server leaves apiVersion and kind out of built-in kinds' list items.
      .map(({ apiVersion, kind, ...rest }) => (type.custom ? { apiVersion, kind, ...rest } : rest));
    return {
      apiVersion: type.apiVersion,
      kind: `${type.kind}List`,
      metadata: { resourceVersion: this.store.resourceVersion },
      items,
    };
  }
}

function patchTypeOf(type: ResourceType, contentType: string): PatchType {
  const patchType = (PATCH_CONTENT_TYPES as Record<string, PatchType | undefined>)[contentType];
  // Custom resources have no strategic merge: the API server refuses it for them.
  if (patchType && !(type.custom && patchType === 'strategic')) return patchType;
  const accepted = Object.keys(PATCH_CONTENT_TYPES).filter(
    (media) => !(type.custom && media.includes('strategic')),
  );
  throw new ApiStatusError(
    415,
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

function requireJson(contentType: string): void {
  if (contentType !== 'application/json')
    throw new ApiStatusError(
      415,
      `the body of the request was in an unknown format - accepted media types include: application/json`,
    );
}

function deletedStatus(type: ResourceType, name: string, uid: string) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, ...(type.group ? { group: type.group } : {}), kind: type.plural, uid },
  };
}

function methodNotAllowed(method: string): ApiStatusError {
  return new ApiStatusError(405, `the server does not allow method ${method} on this path`);
}

function notServed(what: string): ApiStatusError {
  return new ApiStatusError(400, `${what} is not served by ApiServerStandIn`, 'BadRequest');
}
