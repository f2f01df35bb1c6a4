/**
 * @pgcloud/kubernetes/validate: strict validation of the Kubernetes objects pgcloud writes,
 * for tests and the test API server. It imports ajv and kubernetes-models (development
 * dependencies), so production code must not import this entry.
 */
import { KINDS } from './kinds.js';

export { KINDS } from './kinds.js';
export type { KindValidator } from './kinds.js';
export { clusterV1Schema, QUANTITY_PATTERN } from '../cnpg/cluster-v1.schema.js';

/**
 * Every problem of a Kubernetes object against its kind's schema, each as
 * `Kind/name: <JSON pointer> <what is wrong>`; empty when it is valid. Unknown fields,
 * wrong types, enums, patterns and missing required fields are problems, and so is a kind
 * not in KINDS.
 */
export function validateObject(obj: unknown): string[] {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
    return [`${JSON.stringify(obj)} is not a Kubernetes object`];
  const object = obj as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  const label = `${String(object.kind)}/${String(object.metadata?.name)}`;
  const validator = KINDS[`${String(object.apiVersion)}/${String(object.kind)}`];
  if (!validator)
    return [`${label}: ${String(object.apiVersion)} ${String(object.kind)} is not a known kind`];
  return validator(object as { kind: string }).map((problem) => `${label}: ${problem}`);
}

/** Throws one Error listing every problem validateObject finds, if it finds any. */
export function assertValid(obj: unknown): void {
  const problems = validateObject(obj);
  if (problems.length > 0)
    throw new Error(`invalid Kubernetes object:\n  ${problems.join('\n  ')}`);
}
