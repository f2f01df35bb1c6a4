import { ajvErrorsOf, describeError, withoutBranches } from './ajv-errors.js';

/** A kubernetes-models class: its prototype's validate() checks `this` against the schema. */
export interface ModelClass {
  prototype: { validate(): void };
}

/**
 * What is wrong with an object against a kubernetes-models class: the model's own
 * validation (types, enums, required fields; one problem per error), then every field the
 * schema does not define.
 *
 * kubernetes-models' validators are compiled from the OpenAPI schema and ignore unknown
 * fields, but they read every field the schema defines, and walk the keys of the maps it
 * defines (labels, data, limits). So the object is validated through a proxy that notes
 * each field read and each object whose keys are listed; a field never read, outside such
 * a map, is one the schema does not know.
 */
export function modelProblems(object: { kind: string }, model: ModelClass): string[] {
  const read = new Set<string>();
  const maps = new Set<string>();
  try {
    model.prototype.validate.call(tracked(object, '', read, maps));
  } catch (err) {
    const errors = ajvErrorsOf(err);
    if (errors) return withoutBranches(errors).map((error) => describeError(error, object.kind));
    return [err instanceof Error ? err.message : String(err)];
  }
  return unknownFields(object, '', read, maps).map(
    (path) => `${path} is not a field of ${object.kind}`,
  );
}

function tracked(value: unknown, path: string, read: Set<string>, maps: Set<string>): unknown {
  if (value === null || typeof value !== 'object') return value;
  return new Proxy(value, {
    get(target, key, receiver) {
      const field: unknown = Reflect.get(target, key, receiver);
      if (typeof key !== 'string') return field;
      read.add(`${path}/${key}`);
      return tracked(field, `${path}/${key}`, read, maps);
    },
    ownKeys(target) {
      maps.add(path);
      return Reflect.ownKeys(target);
    },
  });
}

function unknownFields(
  value: unknown,
  path: string,
  read: Set<string>,
  maps: Set<string>,
): string[] {
  if (value === null || typeof value !== 'object') return [];
  const found: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const childPath = `${path}/${key}`;
    if (!Array.isArray(value) && !maps.has(path) && !read.has(childPath)) found.push(childPath);
    else found.push(...unknownFields(child, childPath, read, maps));
  }
  return found;
}
