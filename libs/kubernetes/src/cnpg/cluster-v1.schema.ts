/**
 * JSON Schema of a postgresql.cnpg.io/v1 Cluster, pinned to CloudNativePG 1.25.1.
 *
 * Written by pgcloud from CNPG 1.25's API reference (field names, types, enums, defaults and
 * the checks of its CRD and admission webhook are CNPG's; the text is ours). It is a
 * SUBSET: only the fields pgcloud writes (and the ones the API server and the operator add
 * to metadata and status) are defined, and every object refuses the fields it does not
 * define (`additionalProperties: false`), so a field outside this schema is refused on
 * purpose: add it here, from the same release's reference, when pgcloud needs it.
 *
 * Beyond CNPG's own required fields, a few that CNPG leaves optional are required because
 * pgcloud always sets them (each marked "pgcloud requires").
 */

import type { Schema } from '../json-schema-parts.js';
import { strictObject, string, stringMap } from '../json-schema-parts.js';

const boolean = { type: 'boolean' };
const integer = { type: 'integer' };
const stringList = { type: 'array', items: string };

/** RFC 3339 date-time, as Kubernetes writes metav1.Time (`2025-01-31T12:00:00Z`). */
const timestamp = {
  type: 'string',
  pattern:
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$',
};

/** Kubernetes' resource.Quantity syntax: `1`, `500m`, `1.5`, `10Gi`, `1e3`. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const quantityString = { type: 'string', pattern: QUANTITY_PATTERN };
/** corev1.ResourceList values: int-or-string quantities. */
const quantity = { anyOf: [{ type: 'integer' }, quantityString] };

/** CNPG's LocalObjectReference: a Secret in the Cluster's namespace (name required). */
const localObjectReference = strictObject({ name: string }, ['name']);

/**
 * corev1.SecretKeySelector (key required). `optional` is left out; pgcloud requires
 * `name` (Kubernetes defaults it to "", which names no Secret).
 */
const secretKeySelector = strictObject({ name: string, key: string }, ['name', 'key']);

const ownerReference = strictObject(
  {
    apiVersion: string,
    kind: string,
    name: string,
    uid: string,
    controller: boolean,
    blockOwnerDeletion: boolean,
  },
  ['apiVersion', 'kind', 'name', 'uid'],
);

const managedFieldsEntry = strictObject({
  manager: string,
  operation: { type: 'string', enum: ['Apply', 'Update'] },
  apiVersion: string,
  time: timestamp,
  fieldsType: string,
  // The API server's own record of field ownership, opaque to pgcloud: any JSON object.
  fieldsV1: { type: 'object' },
  subresource: string,
});

/** Label keys (`[prefix/]name`) and values, as the API server checks them. */
const labels = {
  type: 'object',
  propertyNames: {
    maxLength: 316,
    pattern:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$',
  },
  additionalProperties: {
    type: 'string',
    maxLength: 63,
    pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$',
  },
};

const metadata = strictObject(
  {
    // CNPG's webhook: a DNS-1035 label (Service names derive from it), at most 50 characters.
    name: { type: 'string', maxLength: 50, pattern: '^[a-z]([-a-z0-9]*[a-z0-9])?$' },
    namespace: { type: 'string', maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
    labels,
    annotations: stringMap,
    // Set by the API server:
    uid: string,
    resourceVersion: string,
    generation: integer,
    creationTimestamp: timestamp,
    deletionTimestamp: timestamp,
    deletionGracePeriodSeconds: integer,
    finalizers: stringList,
    ownerReferences: { type: 'array', items: ownerReference },
    managedFields: { type: 'array', items: managedFieldsEntry },
  },
  ['name'],
);

const initdb = strictObject(
  {
    database: string,
    owner: string,
    secret: localObjectReference,
    dataChecksums: boolean,
    encoding: string,
    localeCollate: string,
    localeCType: string,
  },
  ['database', 'owner', 'secret'], // pgcloud requires all three (CNPG defaults to `app`)
);

const pgBasebackup = strictObject(
  {
    source: { type: 'string', minLength: 1 },
    database: string,
    owner: string,
    secret: localObjectReference,
  },
  ['source'],
);

/**
 * CNPG's webhook allows one bootstrap method at most; pgcloud always names exactly one
 * (one property of the two: ajv's strict mode refuses `oneOf` of bare `required`s).
 */
const bootstrap = {
  ...strictObject({ initdb, pg_basebackup: pgBasebackup }),
  minProperties: 1,
  maxProperties: 1,
};

const externalCluster = strictObject(
  {
    name: string,
    connectionParameters: stringMap,
    password: secretKeySelector,
    sslRootCert: secretKeySelector,
  },
  ['name', 'connectionParameters'], // pgcloud requires connectionParameters
);

/**
 * A replica cluster follows `source` (an externalClusters entry) as a standby; `enabled`
 * false promotes it. pgcloud demotes a primary this way to hold it for a restore, and keeps
 * a restored Cluster a standby until the swap is checked.
 */
const replica = strictObject(
  { enabled: boolean, source: { type: 'string', minLength: 1 } },
  ['enabled', 'source'], // pgcloud always says both
);

const computeResources = strictObject({ cpu: quantity, memory: quantity });

const role = strictObject(
  {
    name: string,
    ensure: { type: 'string', enum: ['present', 'absent'] },
    login: boolean,
    replication: boolean,
    superuser: boolean,
    inherit: boolean,
    connectionLimit: integer,
    // The roles this one is a member of (GRANT ... TO it), e.g. pg_read_all_stats.
    inRoles: { type: 'array', items: string },
    passwordSecret: localObjectReference,
  },
  // CNPG requires name; pgcloud requires the rest: never a role left to CNPG's defaults.
  ['name', 'ensure', 'login', 'replication', 'passwordSecret'],
);

const spec = strictObject(
  {
    instances: { type: 'integer', minimum: 1 },
    imageName: string,
    primaryUpdateStrategy: { type: 'string', enum: ['unsupervised', 'supervised'] },
    // Whether CNPG makes a PodDisruptionBudget for the primary (default true).
    enablePDB: boolean,
    enableSuperuserAccess: boolean,
    superuserSecret: localObjectReference,
    postgresql: strictObject(
      { parameters: stringMap, pg_hba: stringList },
      ['parameters', 'pg_hba'], // pgcloud requires both
    ),
    bootstrap,
    externalClusters: { type: 'array', items: externalCluster },
    replica,
    // Size is required: CNPG's webhook needs it when there is no pvcTemplate (not in the subset).
    storage: strictObject({ size: quantityString, storageClass: string }, ['size']),
    resources: strictObject({ requests: computeResources, limits: computeResources }),
    certificates: strictObject(
      {
        serverTLSSecret: string,
        serverCASecret: string,
        clientCASecret: string,
        replicationTLSSecret: string,
      },
      ['serverTLSSecret', 'serverCASecret'], // pgcloud requires both: its CA signs, not CNPG's
    ),
    managed: strictObject({ roles: { type: 'array', items: role } }, ['roles']),
  },
  ['instances', 'storage'],
);

/** metav1.Condition, as CNPG writes them; observedGeneration is left out. */
const condition = strictObject(
  {
    type: {
      type: 'string',
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    },
    message: { type: 'string', maxLength: 32768 },
    lastTransitionTime: timestamp,
  },
  ['type', 'status', 'lastTransitionTime'],
);

const status = strictObject({
  phase: string,
  instances: integer,
  readyInstances: integer,
  currentPrimary: string,
  writeService: string,
  conditions: { type: 'array', items: condition },
});

/** The vendored schema of postgresql.cnpg.io/v1 Cluster (CNPG 1.25.1), pgcloud's subset. */
export const clusterV1Schema: Schema = strictObject(
  {
    apiVersion: { type: 'string', const: 'postgresql.cnpg.io/v1' },
    kind: { type: 'string', const: 'Cluster' },
    metadata,
    spec,
    status,
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);
