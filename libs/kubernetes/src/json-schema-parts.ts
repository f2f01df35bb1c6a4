/** Parts the JSON Schemas written here (a CNPG Cluster, a PrometheusRule) are built from. */

export type Schema = Record<string, unknown>;

/** An object with exactly these fields. */
export function strictObject(properties: Record<string, Schema>, required: string[] = []): Schema {
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}

export const string = { type: 'string' };
/** A map of strings to strings (labels, annotations, parameters): any key, string values. */
export const stringMap = { type: 'object', additionalProperties: string };
