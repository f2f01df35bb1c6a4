import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { ApiError, ApiUnreachableError, apiErrorOf } from '@pgcloud/api-client';
import type {
  LocalDatabaseDetail,
  LocalDatabaseList,
  LocalDeleted,
  LocalSnapshot,
  LocalSnapshotList,
} from '@pgcloud/contracts';
import { CliError, EXIT } from './exit-codes.js';
import { configDirectory } from './settings-files.js';

/** Where `npm run daemon` listens unless told otherwise (docs/api/local-daemon.md). */
export const DEFAULT_DAEMON_URL = 'http://127.0.0.1:5480';

export type {
  LocalConnection,
  LocalDatabase,
  LocalDatabaseDetail,
  LocalDatabaseList,
  LocalDeleted,
  LocalSnapshot,
  LocalSnapshotList,
} from '@pgcloud/contracts';

/**
 * Body of POST /databases: `template` names an existing local database to copy;
 * `ttlSeconds` and `temporary` say how long it lives.
 */
export interface CreateLocalDatabase {
  name: string;
  template?: string;
  ttlSeconds?: number;
  temporary?: boolean;
  /** A downloaded cloud backup to restore into it (`local pull`). */
  fromArchive?: { path: string; checksumSha256: string };
}

/** The daemon's address and token, and the fetch to use (a test passes a fake). */
export interface LocalDaemonOptions {
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
}

/**
 * The local daemon's routes: its databases and their snapshots. The daemon has no OpenAPI document; its answers use the
 * cloud API's envelope, so its errors are ApiError (exit codes by code and status) and a
 * daemon that does not answer is ApiUnreachableError.
 */
export class LocalDaemonClient {
  readonly baseUrl: string;

  constructor(private readonly options: LocalDaemonOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  list(): Promise<LocalDatabaseList> {
    return this.request('GET', '/databases');
  }

  create(body: CreateLocalDatabase): Promise<LocalDatabaseDetail> {
    return this.request('POST', '/databases', body);
  }

  get(name: string): Promise<LocalDatabaseDetail> {
    return this.request('GET', `/databases/${encodeURIComponent(name)}`);
  }

  delete(name: string): Promise<LocalDeleted> {
    return this.request('DELETE', `/databases/${encodeURIComponent(name)}`);
  }

  snapshot(name: string, snapshot: string): Promise<LocalSnapshot> {
    return this.request('POST', `/databases/${encodeURIComponent(name)}/snapshots`, {
      name: snapshot,
    });
  }

  snapshots(name: string): Promise<LocalSnapshotList> {
    return this.request('GET', `/databases/${encodeURIComponent(name)}/snapshots`);
  }

  reset(name: string, snapshot: string): Promise<LocalDatabaseDetail> {
    return this.request('POST', `/databases/${encodeURIComponent(name)}/reset`, { snapshot });
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await (this.options.fetch ?? fetchUntimed)(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      text = await response.text();
    } catch (cause) {
      throw new LocalDaemonUnreachableError(this.baseUrl, cause);
    }
    const parsed = parseJson(text);
    if (!response.ok) throw apiErrorOf(response, parsed);
    const envelope = parsed as { success?: unknown; data?: unknown } | undefined;
    if (envelope?.success !== true || envelope.data === undefined)
      throw new ApiError(
        response.status,
        'NOT_A_DAEMON',
        `${this.baseUrl} answered without the daemon's envelope: is something else listening ` +
          'there? Pass --daemon-url or set PGCLOUD_DAEMON_URL',
        response.headers.get('x-request-id') ?? undefined,
      );
    return envelope.data as T;
  }
}

/** The daemon did not answer: most often, it is not running. */
export class LocalDaemonUnreachableError extends ApiUnreachableError {
  constructor(url: string, cause: unknown) {
    super(url, { cause });
    this.message =
      `cannot reach the local daemon at ${url} (${describeCause(cause)}): ` +
      'start it with `npm run daemon`, or pass --daemon-url or PGCLOUD_DAEMON_URL';
  }
}

/** `--daemon-url`, then PGCLOUD_DAEMON_URL, then the daemon's default address. */
export function daemonUrl(given: string | undefined, env: NodeJS.ProcessEnv): string {
  return given || env['PGCLOUD_DAEMON_URL'] || DEFAULT_DAEMON_URL;
}

/** DAEMON_TOKEN_FILE, else `$XDG_CONFIG_HOME/pgcloud/daemon.token`, as the daemon writes it. */
export function daemonTokenPath(env: NodeJS.ProcessEnv): string {
  return env['DAEMON_TOKEN_FILE'] || join(configDirectory(env), 'daemon.token');
}

/** The token the daemon wrote on its first start; exit code 3 when there is none. */
export function readDaemonToken(env: NodeJS.ProcessEnv): string {
  const path = daemonTokenPath(env);
  let token: string;
  try {
    token = readFileSync(path, 'utf8').trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no daemon token at' : `cannot read (${code})`;
    throw new CliError(
      EXIT.auth,
      'DAEMON_TOKEN_MISSING',
      `${why} ${path}: start the local daemon (\`npm run daemon\`), which writes it on its ` +
        'first start, or set DAEMON_TOKEN_FILE to the file it wrote',
    );
  }
  if (!token)
    throw new CliError(
      EXIT.auth,
      'DAEMON_TOKEN_MISSING',
      `${path} is empty: remove it and restart the local daemon (\`npm run daemon\`)`,
    );
  return token;
}

/**
 * fetch over node:http, which waits for an answer as long as it takes: the built-in fetch
 * gives up after 5 minutes without response headers, and the daemon answers a pull of a
 * large database only once it is restored. The daemon is on loopback, plain HTTP.
 */
export function fetchUntimed(url: string, init?: RequestInit): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: init?.method ?? 'GET', headers: init?.headers as Record<string, string> },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.once('error', reject);
        answer.once('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(answer.headers))
            if (typeof value === 'string') headers.set(name, value);
          resolve(
            new Response(Buffer.concat(chunks), { status: answer.statusCode ?? 502, headers }),
          );
        });
      },
    );
    request.once('error', reject);
    request.end(typeof init?.body === 'string' ? init.body : undefined);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // fetch says only "fetch failed"; what failed (ECONNREFUSED) is its cause.
  const inner = (cause as { cause?: unknown }).cause;
  const code = inner instanceof Error ? (inner as NodeJS.ErrnoException).code : undefined;
  return code ?? (inner instanceof Error ? inner.message : cause.message);
}
