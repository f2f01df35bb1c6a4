import { ApiStatusError, badRequest } from './api-status.js';

/**
 * The patch content types the test API applies. @kubernetes/client-node 1.4.0 sends
 * `application/json-patch+json` for every patch call unless the caller sets another
 * Content-Type through the call's options:
 * `setHeaderOptions('Content-Type', PatchStrategy.MergePatch)` (both from client-node).
 */
export const PATCH_CONTENT_TYPES = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
} as const;

export type PatchType = (typeof PATCH_CONTENT_TYPES)[keyof typeof PATCH_CONTENT_TYPES];

type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `target` with `patch` applied (a new value; `target` is not changed). Strategic merge is
 * served as a merge patch: maps merge, lists are replaced whole (the real one merges some
 * lists by key, e.g. containers by name); its `$patch`-style directives are refused (400).
 * A malformed patch is a 400; a JSON patch operation that cannot apply is a 422, as the API
 * server answers.
 */
export function applyPatch(target: unknown, patch: unknown, type: PatchType): unknown {
  switch (type) {
    case 'json':
      return applyJsonPatch(structuredClone(target), patch);
    case 'merge':
      return mergePatch(target, patch);
    case 'strategic':
      refuseDirectives(patch);
      return mergePatch(target, patch);
  }
}

/** RFC 7386: objects merge key by key, `null` removes a key, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const result: JsonObject = isJsonObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function refuseDirectives(patch: unknown): void {
  if (Array.isArray(patch)) patch.forEach(refuseDirectives);
  if (!isJsonObject(patch)) return;
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$'))
      throw badRequest(`strategic merge directive ${key} is not served by ApiServerStandIn`);
    refuseDirectives(value);
  }
}

interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

const OPERATIONS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** RFC 6902, applied in order to `document` (changed in place; the root may be replaced). */
function applyJsonPatch(document: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw badRequest('a JSON patch must be an array of operations');
  const operations = patch.map(checkOperation);
  let root = document;
  for (const operation of operations) root = applyOperation(root, operation);
  return root;
}

function checkOperation(operation: unknown): JsonPatchOperation {
  if (!isJsonObject(operation) || !OPERATIONS.has(operation.op as string))
    throw badRequest(`invalid JSON patch operation: ${JSON.stringify(operation)}`);
  if (typeof operation.path !== 'string')
    throw badRequest(`JSON patch operation without a path: ${JSON.stringify(operation)}`);
  const needsFrom = operation.op === 'move' || operation.op === 'copy';
  if (needsFrom && typeof operation.from !== 'string')
    throw badRequest(`JSON patch ${operation.op as string} without a from`);
  const needsValue =
    operation.op === 'add' || operation.op === 'replace' || operation.op === 'test';
  if (needsValue && !('value' in operation))
    throw badRequest(`JSON patch ${operation.op as string} without a value`);
  return operation as unknown as JsonPatchOperation;
}

function applyOperation(root: unknown, operation: JsonPatchOperation): unknown {
  const { op, path } = operation;
  switch (op) {
    case 'add':
      return add(root, path, structuredClone(operation.value));
    case 'remove':
      return remove(root, path).root;
    case 'replace':
      remove(root, path);
      return add(root, path, structuredClone(operation.value));
    case 'move': {
      const removed = remove(root, operation.from!);
      return add(removed.root, path, removed.value);
    }
    case 'copy':
      return add(root, path, structuredClone(valueAt(root, operation.from!)));
    case 'test':
      if (!sameJson(valueAt(root, path), operation.value))
        throw cannotApply(`test failed at ${path}: the value differs`);
      return root;
  }
}

function cannotApply(message: string): ApiStatusError {
  return new ApiStatusError(422, `the JSON patch cannot be applied: ${message}`, 'Invalid');
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function valueAt(root: unknown, path: string): unknown {
  let current = root;
  for (const token of pointer(path)) current = child(current, token, path);
  return current;
}

function child(container: unknown, token: string, path: string): unknown {
  if (Array.isArray(container)) return container[arrayIndex(container, token, path, false)];
  if (isJsonObject(container) && Object.hasOwn(container, token)) return container[token];
  throw cannotApply(`${path} does not exist`);
}

function arrayIndex(array: unknown[], token: string, path: string, adding: boolean): number {
  if (adding && token === '-') return array.length;
  const index = /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : NaN;
  if (!(index < array.length + (adding ? 1 : 0))) throw cannotApply(`${path}: no index ${token}`);
  return index;
}

/** The container of the last token of `path`, and that token. */
function parentOf(root: unknown, path: string): { parent: unknown; token: string } {
  const tokens = pointer(path);
  let parent = root;
  for (const token of tokens.slice(0, -1)) parent = child(parent, token, path);
  return { parent, token: tokens.at(-1)! };
}

function add(root: unknown, path: string, value: unknown): unknown {
  if (path === '') return value;
  const { parent, token } = parentOf(root, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, token, path, true), 0, value);
  else if (isJsonObject(parent)) parent[token] = value;
  else throw cannotApply(`${path}: the parent is not an object or array`);
  return root;
}

function remove(root: unknown, path: string): { root: unknown; value: unknown } {
  if (path === '') return { root: null, value: root };
  const { parent, token } = parentOf(root, path);
  const value = child(parent, token, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, token, path, false), 1);
  else delete (parent as JsonObject)[token];
  return { root, value };
}

/** Deep equality of two JSON values (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => sameJson(item, b[i]))
    );
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]))
  );
}
