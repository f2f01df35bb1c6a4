import type { ErrorObject } from 'ajv';

/**
 * One ajv error as `<JSON pointer> <what is wrong>`: the same words for the Cluster schema
 * and for the kubernetes-models validators (which use ajv too).
 */
export function describeError(error: ErrorObject, kind: string): string {
  const path = error.instancePath || '/';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${error.instancePath}/${String(params['additionalProperty'])} is not a field of ${kind}`;
    case 'enum':
      return `${path} must be one of: ${(params['allowedValues'] as unknown[]).join(', ')}`;
    default:
      return `${path} ${error.message}`;
  }
}

/** An error inside one branch of an anyOf/oneOf: the anyOf's own error says it. */
const BRANCH = /\/(anyOf|oneOf)\/\d+\//;

/** The errors worth reporting: not those of each branch of an anyOf/oneOf. */
export function withoutBranches(errors: ErrorObject[]): ErrorObject[] {
  return errors.filter((error) => !BRANCH.test(error.schemaPath));
}

/** The ajv errors a kubernetes-models ValidationError carries, if it is one. */
export function ajvErrorsOf(err: unknown): ErrorObject[] | undefined {
  const errors = (err as { errors?: unknown } | null)?.errors;
  return Array.isArray(errors) &&
    errors.every((e) => typeof e === 'object' && e !== null && 'instancePath' in e)
    ? (errors as ErrorObject[])
    : undefined;
}
