import { RESOURCE_TYPES, type ResourceType } from './resource-types.js';

const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/**
 * The discovery documents for the served kinds (/version, /api, /apis, /api/v1, /apis/GROUP,
 * /apis/GROUP/VERSION): what KubernetesObjectApi reads to map a kind to its path. The typed
 * clients (CoreV1Api, BatchV1Api, CustomObjectsApi) and Watch build paths themselves and
 * never ask for them.
 */
export function discoveryDocument(pathname: string): object | undefined {
  if (pathname === '/version')
    return { major: '1', minor: '32', gitVersion: 'v1.32.0-pgcloud-kubernetes-test-api' };
  if (pathname === '/api') return { kind: 'APIVersions', apiVersion: 'v1', versions: ['v1'] };
  if (pathname === '/apis')
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups().map(apiGroup) };
  if (pathname === '/api/v1') return resourceList('');
  const [, apis, group, version, ...rest] = pathname.split('/');
  if (apis !== 'apis' || rest.length > 0 || !groups().includes(group)) return undefined;
  if (version === undefined) return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group) };
  return version === 'v1' ? resourceList(group) : undefined;
}

function groups(): string[] {
  return [...new Set(RESOURCE_TYPES.map((t) => t.group).filter((g) => g !== ''))];
}

function apiGroup(group: string) {
  const version = { groupVersion: `${group}/v1`, version: 'v1' };
  return { name: group, versions: [version], preferredVersion: version };
}

function resourceList(group: string) {
  const types = RESOURCE_TYPES.filter((t) => t.group === group);
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/v1` : 'v1',
    resources: types.flatMap((t) => [
      resource(t, t.plural, VERBS),
      ...(t.statusSubresource
        ? [resource(t, `${t.plural}/status`, ['get', 'patch', 'update'])]
        : []),
    ]),
  };
}

function resource(type: ResourceType, name: string, verbs: string[]) {
  return { name, singularName: type.singular, namespaced: type.namespaced, kind: type.kind, verbs };
}
