import { RESOURCE_TYPES, type ResourceType } from './resource-types.js';

/** What a REST path names: a collection (no name), an object, or its status subresource. */
export interface ResourcePath {
  type: ResourceType;
  /** Unset for cluster-scoped kinds and for lists across namespaces. */
  namespace?: string;
  name?: string;
  status: boolean;
}

/**
 * Parses `/api/v1/...` and `/apis/GROUP/v1/...` paths:
 * `PLURAL` (cluster-scoped kinds, or a list across namespaces), `PLURAL/NAME[/status]`
 * (cluster-scoped) and `namespaces/NS/PLURAL[/NAME[/status]]`. Undefined for anything else.
 */
export function parseResourcePath(pathname: string): ResourcePath | undefined {
  const segments = pathname.split('/').slice(1).map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (segments[0] === 'api' && segments[1] === 'v1') [group, rest] = ['', segments.slice(2)];
  else if (segments[0] === 'apis' && segments[2] === 'v1')
    [group, rest] = [segments[1], segments.slice(3)];
  else return undefined;
  const typeOf = (plural: string) =>
    RESOURCE_TYPES.find((t) => t.group === group && t.plural === plural);

  if (rest.some((segment) => segment === '')) return undefined;
  const [plural, ...tail] = rest;
  const inner = plural === 'namespaces' && tail.length >= 2 ? typeOf(tail[1]) : undefined;
  if (inner?.namespaced) {
    const [namespace, , name, status, ...extra] = tail;
    if (extra.length > 0 || (status !== undefined && status !== 'status')) return undefined;
    return withStatus({ type: inner, namespace, name, status: status === 'status' });
  }
  const type = typeOf(plural);
  if (!type) return undefined;
  if (tail.length === 0) return { type, status: false };
  if (!type.namespaced && (tail.length === 1 || (tail.length === 2 && tail[1] === 'status')))
    return withStatus({ type, name: tail[0], status: tail.length === 2 });
  return undefined;
}

function withStatus(path: ResourcePath): ResourcePath | undefined {
  return path.status && !path.type.statusSubresource ? undefined : path;
}
