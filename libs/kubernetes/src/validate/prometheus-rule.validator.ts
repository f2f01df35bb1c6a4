import type { ValidateFunction } from 'ajv';
import { Ajv } from 'ajv';
import { prometheusRuleV1Schema } from '../prometheus/prometheus-rule-v1.schema.js';
import { describeError, withoutBranches } from './ajv-errors.js';

let compiled: ValidateFunction | undefined;

/** What is wrong with a monitoring.coreos.com/v1 PrometheusRule against its schema. */
export function prometheusRuleProblems(object: unknown): string[] {
  compiled ??= new Ajv({ strict: true, allErrors: true }).compile(prometheusRuleV1Schema);
  if (compiled(object)) return [];
  return withoutBranches(compiled.errors ?? []).map((error) =>
    describeError(error, 'PrometheusRule'),
  );
}
