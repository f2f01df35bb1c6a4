/** What the fuzz reads of /openapi.json. */
interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
}
interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
}
/** The parts of an OpenAPI document the fuzz needs. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** One field of a request body: its name, JSON type and whether it is required. */
export interface BodyField {
  name: string;
  type: string;
  required: boolean;
}

/** A documented route as the fuzz drives it. */
export interface FuzzRoute {
  method: string;
  /** The OpenAPI path, with `{param}` placeholders. */
  path: string;
  /** True when the route takes a bearer token. */
  bearer: boolean;
  pathParams: string[];
  queryParams: { name: string; type: string }[];
  /** The documented media type of the body, or undefined when it takes none. */
  bodyType?: string;
  bodyFields: BodyField[];
}

function resolve(doc: OpenApiDocument, schema: Schema | undefined): Schema {
  if (!schema?.$ref) return schema ?? {};
  return doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] ?? {};
}

/** Every operation of the document, in a stable order. */
export function routesOf(doc: OpenApiDocument): FuzzRoute[] {
  const routes: FuzzRoute[] = [];
  for (const path of Object.keys(doc.paths).sort()) {
    for (const [method, operation] of Object.entries(doc.paths[path])) {
      const parameters = operation.parameters ?? [];
      const [bodyType, media] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
      const body = resolve(doc, media?.schema);
      routes.push({
        method: method.toUpperCase(),
        path,
        bearer: (operation.security ?? []).some((requirement) => 'bearer' in requirement),
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, type: resolve(doc, p.schema).type ?? 'string' })),
        bodyType,
        bodyFields: Object.entries(body.properties ?? {}).map(([name, field]) => ({
          name,
          type: resolve(doc, field).type ?? 'object',
          required: body.required?.includes(name) ?? false,
        })),
      });
    }
  }
  return routes;
}
