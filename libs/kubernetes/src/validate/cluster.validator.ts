import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv } from 'ajv';
import { QUANTITY_PATTERN, clusterV1Schema } from '../cnpg/cluster-v1.schema.js';
import { describeError, withoutBranches } from './ajv-errors.js';

let compiled: ValidateFunction | undefined;

/** The Cluster schema's validator, compiled on first use and kept. */
function clusterValidator(): ValidateFunction {
  // strict: the schema itself may use no unknown keyword or loose type; allErrors: every
  // problem of an object at once, not only the first.
  compiled ??= new Ajv({ strict: true, allErrors: true }).compile(clusterV1Schema);
  return compiled;
}

/** What is wrong with a postgresql.cnpg.io/v1 Cluster against the vendored schema. */
export function clusterProblems(object: unknown): string[] {
  const validate = clusterValidator();
  if (validate(object)) return [];
  return withoutBranches(validate.errors ?? []).map(describe);
}

const QUANTITY = 'must be a Kubernetes quantity (such as 500m, 2Gi or 10)';

/** One ajv error in words, for the checks the Cluster schema adds (quantities, bootstrap). */
function describe(error: ErrorObject): string {
  const path = error.instancePath || '/';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'pattern':
      if (params['pattern'] === QUANTITY_PATTERN) return `${path} ${QUANTITY}`;
      break;
    case 'anyOf': // int-or-string quantities (resources)
      if (error.schemaPath.includes('/resources/')) return `${path} ${QUANTITY}`;
      break;
    case 'minProperties':
    case 'maxProperties':
      if (error.schemaPath.endsWith(`/bootstrap/${error.keyword}`))
        return `${path} must hold exactly one of initdb and pg_basebackup`;
      break;
  }
  return describeError(error, 'Cluster');
}
