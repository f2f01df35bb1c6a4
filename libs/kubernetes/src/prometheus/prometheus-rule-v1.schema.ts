/**
 * JSON Schema of a monitoring.coreos.com/v1 PrometheusRule, as the Prometheus Operator's
 * CRD defines it (field names, types and required fields are the operator's; the text is
 * pgcloud's). A SUBSET, as for the CNPG Cluster: the fields deploy/monitoring writes, and
 * every object refuses the fields it does not define.
 */

import type { Schema } from '../json-schema-parts.js';
import { strictObject, string, stringMap } from '../json-schema-parts.js';

/** Prometheus durations: 30s, 5m, 1h30m. */
export const DURATION_PATTERN =
  '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$';
const duration = { type: 'string', pattern: DURATION_PATTERN };

/** One rule: an alert or a recording, never both. */
const rule = {
  ...strictObject(
    {
      alert: { type: 'string', minLength: 1 },
      record: { type: 'string', minLength: 1 },
      expr: { type: 'string', minLength: 1 },
      for: duration,
      keep_firing_for: duration,
      labels: stringMap,
      annotations: stringMap,
    },
    ['expr'],
  ),
  oneOf: [
    { type: 'object', properties: { alert: string }, required: ['alert'] },
    { type: 'object', properties: { record: string }, required: ['record'] },
  ],
};

const group = strictObject(
  {
    name: { type: 'string', minLength: 1 },
    interval: duration,
    limit: { type: 'integer', minimum: 0 },
    rules: { type: 'array', items: rule },
  },
  ['name', 'rules'],
);

export const prometheusRuleV1Schema: Schema = strictObject(
  {
    apiVersion: { const: 'monitoring.coreos.com/v1' },
    kind: { const: 'PrometheusRule' },
    metadata: strictObject(
      {
        name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 253 },
        namespace: string,
        labels: stringMap,
        annotations: stringMap,
      },
      ['name'],
    ),
    spec: strictObject({ groups: { type: 'array', items: group } }, ['groups']),
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);
