/** The kinds ApiServerStandIn serves: the ones pgcloud's kubernetes driver and the CNPG stand-in use. */
export type ApiServerStandInKind = 'Namespace' | 'Secret' | 'Service' | 'Pod' | 'Job' | 'Cluster';

/** How the test API treats one kind: its REST names and the registry behaviours it copies. */
export interface ResourceType {
  kind: ApiServerStandInKind;
  /** The path segment, e.g. `secrets`. */
  plural: string;
  singular: string;
  /** `''` for the core group. */
  group: string;
  version: 'v1';
  apiVersion: string;
  namespaced: boolean;
  /** Has a `/status` subresource: writes to the object ignore `status`, writes there change only it. */
  statusSubresource: boolean;
  /** DELETE answers the object (pods, services, custom resources) rather than a Status, as their registries do. */
  answersDeletedObject: boolean;
  /** The field whose change bumps metadata.generation. */
  generationField: 'spec' | 'data';
  /** A custom resource: PUT needs metadata.resourceVersion, list items keep apiVersion and kind. */
  custom: boolean;
}

const core = { group: '', version: 'v1', apiVersion: 'v1', custom: false } as const;

/** Every kind served, in discovery order. */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  {
    ...core,
    kind: 'Namespace',
    plural: 'namespaces',
    singular: 'namespace',
    namespaced: false,
    statusSubresource: true,
    answersDeletedObject: true,
    generationField: 'spec',
  },
  {
    ...core,
    kind: 'Secret',
    plural: 'secrets',
    singular: 'secret',
    namespaced: true,
    statusSubresource: false,
    answersDeletedObject: false,
    generationField: 'data',
  },
  {
    ...core,
    kind: 'Service',
    plural: 'services',
    singular: 'service',
    namespaced: true,
    statusSubresource: true,
    answersDeletedObject: true,
    generationField: 'spec',
  },
  {
    ...core,
    kind: 'Pod',
    plural: 'pods',
    singular: 'pod',
    namespaced: true,
    statusSubresource: true,
    answersDeletedObject: true,
    generationField: 'spec',
  },
  {
    kind: 'Job',
    plural: 'jobs',
    singular: 'job',
    group: 'batch',
    version: 'v1',
    apiVersion: 'batch/v1',
    namespaced: true,
    statusSubresource: true,
    answersDeletedObject: false,
    generationField: 'spec',
    custom: false,
  },
  {
    kind: 'Cluster',
    plural: 'clusters',
    singular: 'cluster',
    group: 'postgresql.cnpg.io',
    version: 'v1',
    apiVersion: 'postgresql.cnpg.io/v1',
    namespaced: true,
    statusSubresource: true,
    answersDeletedObject: true,
    generationField: 'spec',
    custom: true,
  },
];

/** The ResourceType of a kind (`Cluster`) or of its plural (`clusters`). */
export function resourceType(kindOrPlural: string): ResourceType {
  const found = RESOURCE_TYPES.find((t) => t.kind === kindOrPlural || t.plural === kindOrPlural);
  if (!found) throw new Error(`ApiServerStandIn does not serve ${kindOrPlural}`);
  return found;
}

/** `secrets`, or `clusters.postgresql.cnpg.io`: how the API server names a resource in messages. */
export function qualifiedPlural(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

/** `Secret`, or `Cluster.postgresql.cnpg.io`: how the API server names a kind in messages. */
export function qualifiedKind(type: ResourceType): string {
  return type.group ? `${type.kind}.${type.group}` : type.kind;
}
