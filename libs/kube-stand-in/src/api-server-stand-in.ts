import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiStatusError, badRequest, injectedFailure } from './api-status.js';
import { discoveryDocument } from './discovery.js';
import { ObjectDeleter } from './object-deletion.js';
import { isJsonObject } from './object-patch.js';
import { StoredObjects } from './stored-objects.js';
import { ObjectWriter, type ObjectValidator } from './object-writes.js';
import { ResourceHandlers } from './resource-handlers.js';
import { parseResourcePath, type ResourcePath } from './resource-paths.js';
import { resourceType, type ApiServerStandInKind } from './resource-types.js';
import { ServerDefaults } from './server-defaults.js';
import type { StoredObject } from './stored-object.js';
import { WatchStreams } from './watch-streams.js';

export type { ObjectValidator as ApiServerStandInValidator } from './object-writes.js';
export type { ApiServerStandInKind } from './resource-types.js';
export type {
  StoredMetadata as ApiServerStandInObjectMeta,
  StoredObject as ApiServerStandInObject,
} from './stored-object.js';

/** Options of ApiServerStandIn.start. */
export interface ApiServerStandInOptions {
  /**
   * Checks every object a create, replace or patch (of the object or its status) would store,
   * server-set metadata included: its problems, answered as 422 Invalid; none when valid.
   * Tests pass the schema validator of @pgcloud/kubernetes here.
   */
  validate?: ObjectValidator;
  /**
   * How many changes are kept for watches that resume from a resourceVersion (default
   * 10,000); a watch from before them gets an ERROR line with a 410 Expired Status.
   */
  watchHistory?: number;
}

/** One request the test API received, for assertions on what a client sent. */
export interface ApiServerStandInRequest {
  method: string;
  /** The URL path, without the query. */
  path: string;
  /** The query string, without `?` ('' when none). */
  query: string;
  contentType?: string;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A stand-in for the Kubernetes API server, for tests only: an HTTP server on 127.0.0.1 that
 * serves, in memory, only what pgcloud's kubernetes driver and the CNPG stand-in use:
 * Namespaces, Secrets, Services, Pods, batch/v1 Jobs and postgresql.cnpg.io/v1 Clusters
 * (get, list, create, replace, patch, delete, watch; status subresources), bearer-token auth,
 * errors as Status objects. Namespaced writes to a namespace that does not exist answer 404,
 * as the real server does; only `default` exists at start. Not served: dryRun, server-side
 * apply, deletecollection, list paging, Pod spec defaults, admission webhooks (so neither
 * CNPG's defaulting nor its validation: pass `validate`).
 *
 * Patch types: @kubernetes/client-node 1.4.0 sends `application/json-patch+json` for every
 * patch call; a caller picks another by passing
 * `setHeaderOptions('Content-Type', PatchStrategy.MergePatch)` (or `StrategicMergePatch`) as
 * the call's options. Strategic merge is served as a merge patch and, as on a real server,
 * refused (415) for custom resources. The kubeconfig sets `insecure-skip-tls-verify`, which
 * client-node requires before it talks plain HTTP.
 */
export class ApiServerStandIn {
  /** Every request received, in order. */
  readonly requests: ApiServerStandInRequest[] = [];
  /** The bearer token clients must send (written into the kubeconfig). */
  readonly token = `kubernetes-test-api-${randomBytes(16).toString('hex')}`;
  private readonly store: StoredObjects;
  private readonly deleter: ObjectDeleter;
  private readonly handlers: ResourceHandlers;
  private readonly watches: WatchStreams;
  private readonly failures = new Map<string, number>();
  private server?: Server;
  private directory = '';
  private port = 0;

  private constructor(options: ApiServerStandInOptions) {
    this.store = new StoredObjects(options.watchHistory ?? 10_000);
    this.deleter = new ObjectDeleter(this.store);
    this.watches = new WatchStreams(this.store);
    const writer = new ObjectWriter(
      this.store,
      this.deleter,
      new ServerDefaults(),
      options.validate,
    );
    this.handlers = new ResourceHandlers(this.store, writer, this.deleter);
    writer.create(resourceType('Namespace'), undefined, { metadata: { name: 'default' } });
  }

  /** Starts the server on a free port of 127.0.0.1 and writes its kubeconfig. */
  static async start(options: ApiServerStandInOptions = {}): Promise<ApiServerStandIn> {
    const api = new ApiServerStandIn(options);
    const server = createServer((request, response) => void api.handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    api.server = server;
    api.port = (server.address() as AddressInfo).port;
    api.directory = await mkdtemp(join(tmpdir(), 'kubernetes-test-api-'));
    await writeFile(api.kubeconfigPath, api.kubeconfigYaml(), { mode: 0o600 });
    return api;
  }

  /** `http://127.0.0.1:PORT`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A kubeconfig file whose current context reaches this server with the token. */
  get kubeconfigPath(): string {
    return join(this.directory, 'kubeconfig.yaml');
  }

  /**
   * A client-node KubeConfig loaded from kubeconfigPath. Asynchronous because client-node is
   * imported here on first use: importing it takes most of a second, which every importer of
   * @pgcloud/kube-stand-in would otherwise pay.
   */
  async kubeConfig(): Promise<KubeConfig> {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const config = new KubeConfig();
    config.loadFromFile(this.kubeconfigPath);
    return config;
  }

  /**
   * Makes the next write (create, replace, patch, status write or delete) of the object of
   * `kind` named `name`, in any namespace, fail with `code`: by default a 409 Conflict, as a
   * racing writer would cause.
   */
  failNextWrite(kind: ApiServerStandInKind, name: string, code = 409): void {
    this.failures.set(`${kind}/${name}`, code);
  }

  /** The stored objects of a kind (in one namespace when given), copies, by namespace and name. */
  objects(kind: ApiServerStandInKind, namespace?: string): StoredObject[] {
    return this.store.list(resourceType(kind), namespace);
  }

  /** Closes every watch and connection, stops the server and removes the kubeconfig. */
  async stop(): Promise<void> {
    this.watches.closeAll();
    const server = this.server;
    if (server) {
      this.server = undefined;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    if (this.directory) await rm(this.directory, { recursive: true, force: true });
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    const method = request.method ?? 'GET';
    const contentType = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    this.requests.push({
      method,
      path: url.pathname,
      query: url.search.slice(1),
      ...(contentType ? { contentType } : {}),
    });
    try {
      const raw = await readBody(request);
      if (request.headers.authorization !== `Bearer ${this.token}`)
        throw new ApiStatusError(401, 'Unauthorized');
      const discovery = method === 'GET' ? discoveryDocument(url.pathname) : undefined;
      if (discovery) return answer(response, 200, discovery);
      const path = parseResourcePath(url.pathname);
      if (!path) throw new ApiStatusError(404, 'the server could not find the requested resource');
      const watch = url.searchParams.get('watch');
      if (method === 'GET' && path.name === undefined && (watch === 'true' || watch === '1'))
        return this.watches.serve(path, url.searchParams, response);
      const body = raw === '' ? undefined : parseJson(raw);
      if (WRITES.has(method)) this.injectFailure(path, body);
      const answered = this.handlers.handle({
        method,
        path,
        query: url.searchParams,
        contentType,
        body,
      });
      answer(response, answered.code, answered.body);
    } catch (err) {
      const error = err instanceof ApiStatusError ? err : new ApiStatusError(500, String(err));
      answer(response, error.code, error.toStatus());
    }
  }

  private injectFailure(path: ResourcePath, body: unknown): void {
    const metadata = isJsonObject(body) && isJsonObject(body.metadata) ? body.metadata : {};
    const name = path.name ?? (typeof metadata.name === 'string' ? metadata.name : undefined);
    const key = `${path.type.kind}/${name}`;
    const code = this.failures.get(key);
    if (name === undefined || code === undefined) return;
    this.failures.delete(key);
    throw injectedFailure(path.type, name, code);
  }

  private kubeconfigYaml(): string {
    const name = 'kubernetes-test-api';
    return [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `  - name: ${name}`,
      '    cluster:',
      `      server: ${this.url}`,
      // client-node refuses a plain-HTTP server unless TLS verification is off (there is no TLS).
      '      insecure-skip-tls-verify: true',
      'users:',
      `  - name: ${name}`,
      '    user:',
      `      token: ${this.token}`,
      'contexts:',
      `  - name: ${name}`,
      '    context:',
      `      cluster: ${name}`,
      `      user: ${name}`,
      '      namespace: default',
      `current-context: ${name}`,
      '',
    ].join('\n');
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw badRequest('the request body is not valid JSON');
  }
}

function answer(response: ServerResponse, code: number, body: unknown): void {
  response.writeHead(code, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
