import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { ApiClient } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { newClient } from '../support/shared-stack.js';

/** Who may call a route: anyone (JSON), a bearer token (JSON), or a browser (HTML page). */
type Access = 'public' | 'bearer' | 'page';

/** A documented route: method, OpenAPI path, who may call it, its success status. */
type CloudRoute = readonly [method: string, path: string, access: Access, status: 200 | 201];

/** The restore POSTs, which also answer 200 with a plan for `?dry_run=true`. */
const DRY_RUN_ROUTES = new Set([
  '/projects/{project_id}/databases/{name}/backups/{backup_id}/restore',
  '/projects/{project_id}/databases/{name}/pitr/restore',
]);

/**
 * Every route the gateway serves, as /openapi.json must describe it: the cloud routes
 * (docs/api/README.md) and the /device page. Each later issue adds its
 * routes here; the document may hold no route that is missing from this list.
 */
export const CLOUD_ROUTES: readonly CloudRoute[] = [
  ['get', '/', 'public', 200],
  ['post', '/auth/device', 'public', 200],
  ['post', '/auth/device/token', 'public', 200],
  ['get', '/auth/me', 'bearer', 200],
  ['post', '/auth/logout', 'bearer', 200],
  ['get', '/auth/tokens', 'bearer', 200],
  ['post', '/auth/tokens', 'bearer', 201],
  ['delete', '/auth/tokens/{id}', 'bearer', 200],
  ['get', '/projects', 'bearer', 200],
  ['post', '/projects', 'bearer', 201],
  ['get', '/projects/{id}', 'bearer', 200],
  ['delete', '/projects/{id}', 'bearer', 200],
  ['get', '/regions', 'bearer', 200],
  ['get', '/projects/{project_id}/databases', 'bearer', 200],
  ['post', '/projects/{project_id}/databases', 'bearer', 201],
  ['get', '/projects/{project_id}/databases/{name}', 'bearer', 200],
  ['patch', '/projects/{project_id}/databases/{name}', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/branches', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/url', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/storage/cleanup', 'bearer', 200],
  ['delete', '/projects/{project_id}/databases/{name}', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/backups', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/backups', 'bearer', 201],
  ['get', '/projects/{project_id}/databases/{name}/backups/{backup_id}', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/backups/{backup_id}/download', 'bearer', 200],
  ['delete', '/projects/{project_id}/databases/{name}/backups/{backup_id}', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/backups/{backup_id}/restore', 'bearer', 201],
  ['get', '/projects/{project_id}/databases/{name}/restores', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/restores/{restore_id}', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/restores/{restore_id}/cancel', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/credentials/rotate', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/drills', 'bearer', 201],
  ['get', '/projects/{project_id}/databases/{name}/drills', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/drills/{drill_id}', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/pitr/config', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/pitr/enable', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/pitr/disable', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/pitr/wal', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/pitr/recovery-window', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/pitr/receiver-status', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/pitr/restart-receiver', 'bearer', 200],
  ['post', '/projects/{project_id}/databases/{name}/pitr/restore', 'bearer', 201],
  ['get', '/projects/{project_id}/databases/{name}/pitr/restores', 'bearer', 200],
  ['get', '/projects/{project_id}/databases/{name}/pitr/restores/{restore_id}', 'bearer', 200],
  [
    'post',
    '/projects/{project_id}/databases/{name}/pitr/restores/{restore_id}/cancel',
    'bearer',
    200,
  ],
  ['post', '/projects/{project_id}/databases/{name}/pitr/restore-points', 'bearer', 201],
  ['get', '/projects/{project_id}/databases/{name}/pitr/restore-points', 'bearer', 200],
  ['get', '/projects/{project_id}/webhooks', 'bearer', 200],
  ['post', '/projects/{project_id}/webhooks', 'bearer', 201],
  ['get', '/projects/{project_id}/webhooks/{webhook_id}', 'bearer', 200],
  ['patch', '/projects/{project_id}/webhooks/{webhook_id}', 'bearer', 200],
  ['delete', '/projects/{project_id}/webhooks/{webhook_id}', 'bearer', 200],
  ['post', '/projects/{project_id}/webhooks/{webhook_id}/rotate-secret', 'bearer', 200],
  ['get', '/projects/{project_id}/webhooks/{webhook_id}/deliveries', 'bearer', 200],
  ['get', '/ca.pem', 'page', 200],
  ['get', '/device', 'page', 200],
  ['post', '/device', 'page', 200],
];

interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
}
interface Media {
  schema?: Schema;
}
interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  servers?: { url: string }[];
  security?: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    securitySchemes?: Record<string, { type?: string; scheme?: string }>;
  };
}

describe('the OpenAPI document and /docs', () => {
  let api: ApiClient;
  let doc: OpenApiDocument;

  /** The schema a $ref names, or the schema itself. */
  function resolve(schema: Schema | undefined): Schema {
    assert.ok(schema, 'a schema');
    if (!schema.$ref) return schema;
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = doc.components.schemas[name];
    assert.ok(target, `${schema.$ref} is in components`);
    return target;
  }

  function operation(method: string, path: string): Operation {
    const found = doc.paths[path]?.[method];
    assert.ok(found, `${method.toUpperCase()} ${path} is documented`);
    return found;
  }

  function requestBodyOf(method: string, path: string, mediaType: string): Schema {
    return resolve(operation(method, path).requestBody?.content[mediaType]?.schema);
  }

  before(async () => {
    api = await newClient();
    const response = await api.get<OpenApiDocument>('/openapi.json');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    // A public route like any other: counted against the client IP's bucket.
    assert.equal(response.headers.get('x-ratelimit-limit'), '600');
    doc = response.body;
  });

  it('serves an OpenAPI 3 document, public and not wrapped in the envelope', async () => {
    assert.match(doc.openapi, /^3\.\d+\.\d+$/);
    assert.ok(!('success' in doc) && !('data' in doc), 'the document is not an envelope');
    assert.equal(doc.info.title, 'pgcloud');
    const health = expectData<{ version: string }>(await api.get('/'), 200);
    assert.equal(doc.info.version, health.version);
    // Relative, so the committed copy (libs/api-client/openapi.json) is this same document.
    const servers = doc.servers?.map((server) => server.url);
    assert.deepEqual(servers, ['/'], 'the one server is the deployment serving the document');
    const bearer = doc.components.securitySchemes?.['bearer'];
    assert.equal(bearer?.type, 'http');
    assert.equal(bearer?.scheme, 'bearer');
  });

  it('documents every route, and no route missing from CLOUD_ROUTES', () => {
    for (const [method, path] of CLOUD_ROUTES) operation(method, path);
    const listed = new Set(CLOUD_ROUTES.map(([method, path]) => `${method} ${path}`));
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        assert.ok(listed.has(`${method} ${path}`), `add ${method} ${path} to CLOUD_ROUTES`);
      }
    }
  });

  it('describes each JSON answer as the envelope around a documented payload', () => {
    for (const [method, path, access, status] of CLOUD_ROUTES) {
      if (access === 'page') continue;
      const responses = Object.entries(operation(method, path).responses);
      const successes = responses.filter(([code]) => code.startsWith('2'));
      assert.deepEqual(
        successes.map(([code]) => code),
        DRY_RUN_ROUTES.has(path) ? ['200', String(status)] : [String(status)],
        `${method} ${path} answers ${status}`,
      );
      for (const [, success] of successes) {
        const envelope = resolve(success.content?.['application/json']?.schema);
        assert.deepEqual(envelope.properties?.['success']?.enum, [true], `${method} ${path}`);
        const data = envelope.properties?.['data'];
        assert.ok(data, `${method} ${path} documents data`);
        for (const payload of data.oneOf ?? [data]) assert.ok(resolve(payload).properties);
      }

      const errors = responses.filter(([code]) => !code.startsWith('2'));
      assert.ok(errors.length > 0, `${method} ${path} documents its errors`);
      for (const [, error] of errors) {
        const body = resolve(error.content?.['application/json']?.schema);
        assert.deepEqual(body.properties?.['success']?.enum, [false]);
        assert.ok(body.properties?.['error'], `${method} ${path}: the error envelope`);
      }
    }
  });

  it('documents the answers and errors that routes really give', () => {
    const statuses = (method: string, path: string): string[] =>
      Object.keys(operation(method, path).responses);
    assert.ok(statuses('get', '/projects').includes('401'));
    assert.ok(statuses('post', '/projects').includes('400'));
    assert.ok(statuses('post', '/projects').includes('409'));
    assert.ok(statuses('post', '/projects').includes('413'));
    assert.ok(statuses('get', '/projects/{id}').includes('404'));
    assert.ok(statuses('delete', '/projects/{id}').includes('409'));
    assert.ok(statuses('post', '/auth/device/token').includes('400'));
    assert.ok(!statuses('post', '/auth/device').includes('401'), 'a public route has no 401');
    const pitr = '/projects/{project_id}/databases/{name}/pitr';
    assert.ok(statuses('get', `${pitr}/wal`).includes('409'), 'PITR_NOT_ENABLED');
    assert.ok(statuses('post', `${pitr}/enable`).includes('403'), 'QUOTA_EXCEEDED');
    const error = resolve(doc.components.schemas['ErrorEnvelope']?.properties?.['error']);
    for (const code of ['VALIDATION_ERROR', 'AUTH_REQUIRED', 'PROJECT_NOT_FOUND']) {
      assert.ok(error.properties?.['code']?.enum?.includes(code), code);
    }
  });

  it('documents the request bodies and parameters', () => {
    const project = requestBodyOf('post', '/projects', 'application/json');
    assert.ok(project.properties?.['name'] && project.properties['default_region']);
    assert.deepEqual(project.required, ['name']);
    const poll = requestBodyOf('post', '/auth/device/token', 'application/json');
    assert.ok(poll.properties?.['device_code']);
    assert.deepEqual(poll.required, ['device_code']);
    const parameters = operation('delete', '/projects/{id}').parameters ?? [];
    assert.deepEqual(
      parameters.map((p) => `${p.in}:${p.name}`),
      ['path:id', 'query:force'],
    );
    const pitr = '/projects/{project_id}/databases/{name}/pitr';
    const enable = requestBodyOf('post', `${pitr}/enable`, 'application/json');
    assert.deepEqual(enable.required, ['retention_days']);
    const walQuery = (operation('get', `${pitr}/wal`).parameters ?? [])
      .filter((p) => p.in === 'query')
      .map((p) => p.name);
    assert.deepEqual(walQuery.sort(), ['cursor', 'limit']);
  });

  it('documents the Idempotency-Key of every POST that creates something', () => {
    const database = '/projects/{project_id}/databases/{name}';
    const creating = [
      '/projects',
      '/projects/{project_id}/databases',
      `${database}/backups`,
      `${database}/backups/{backup_id}/restore`,
      `${database}/pitr/enable`,
      `${database}/pitr/restore`,
      '/projects/{project_id}/webhooks',
    ];
    for (const path of creating) {
      const post = operation('post', path);
      const headers = (post.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
      assert.deepEqual(headers, ['Idempotency-Key'], path);
      assert.ok(post.responses['422'], `${path} documents IDEMPOTENCY_KEY_REUSED`);
      assert.ok(post.responses['409'], `${path} documents OPERATION_IN_PROGRESS`);
    }
    const disable = operation('post', `${database}/pitr/disable`).parameters ?? [];
    assert.ok(!disable.some((p) => p.in === 'header'), 'a POST that creates nothing takes no key');
  });

  it('marks the protected routes with the bearer scheme, and the public ones without', () => {
    assert.equal(doc.security, undefined, 'no document-wide requirement');
    for (const [method, path, access] of CLOUD_ROUTES) {
      const security = operation(method, path).security;
      if (access === 'bearer') assert.deepEqual(security, [{ bearer: [] }], `${method} ${path}`);
      else assert.deepEqual(security, [], `${method} ${path} is public`);
    }
  });

  it('describes the /device page as HTML, and its form fields', () => {
    for (const method of ['get', 'post']) {
      const ok = operation(method, '/device').responses['200'];
      assert.equal(resolve(ok?.content?.['text/html']?.schema).type, 'string');
    }
    const form = requestBodyOf('post', '/device', 'application/x-www-form-urlencoded');
    assert.deepEqual(Object.keys(form.properties ?? {}).sort(), [
      'action',
      'email',
      'login',
      'user_code',
    ]);
    assert.deepEqual(form.properties?.['action']?.enum, ['approve', 'deny']);
  });

  it('serves Swagger UI at /docs with assets of its own, not from outside', async () => {
    const page = await api.get<string>('/docs');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.ok(page.body.includes('id="swagger-ui"'));
    const base = new URL('/docs', api.baseUrl);
    const links = [...page.body.matchAll(/(?:src|href)=["']([^"']+)["']/g)].map((m) => m[1]);
    for (const link of links) {
      assert.equal(new URL(link, base).origin, base.origin, `${link} is served by the gateway`);
    }
    const assets = links.filter((link) => /\.(js|css)$/.test(link));
    assert.ok(
      assets.some((link) => link.endsWith('swagger-ui-bundle.js')),
      assets.join(' '),
    );
    for (const asset of assets) {
      const url = new URL(asset, base);
      const response = await api.get<string>(url.pathname);
      assert.equal(response.status, 200, asset);
      assert.match(response.headers.get('content-type') ?? '', /javascript|css/, asset);
      assert.ok(response.body.length > 0, asset);
    }
  });
});
