const SECRET_FIELDS = [
  'access_token',
  'device_code',
  'password',
  'download_url',
  'connection_string',
];
const secrets = new Set<string>();

/** Every secret an API answer handed to this process, for the log scan at the end of e2e. */
export function seenSecrets(): ReadonlySet<string> {
  return secrets;
}

/** Adds a secret handed out outside the API (such as a fake provider's token) to that scan. */
export function rememberSecret(value: string): void {
  secrets.add(value);
}

function rememberSecrets(body: unknown): void {
  const data = (body as { data?: unknown } | undefined)?.data;
  if (typeof data !== 'object' || data === null) return;
  for (const field of SECRET_FIELDS) {
    const value = (data as Record<string, unknown>)[field];
    if (typeof value === 'string' && value.length >= 8) secrets.add(value);
  }
  // A pre-signed URL's signature is a secret on its own too: it must not reach any log.
  const download = (data as Record<string, unknown>)['download_url'];
  if (typeof download === 'string') {
    const signature = new URL(download).searchParams.get('X-Amz-Signature');
    if (signature) secrets.add(signature);
  }
  // A connection string's password is a secret on its own too.
  const connection = (data as Record<string, unknown>)['connection_string'];
  if (typeof connection === 'string') {
    const password = decodeURIComponent(new URL(connection).password);
    if (password.length >= 8) secrets.add(password);
  }
}

/** One HTTP answer, with the body parsed when it is JSON. */
export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** The envelope's shapes, for tests to read answers. */
export interface SuccessBody<T> {
  success: true;
  data: T;
}
export interface ErrorEnvelope {
  success: false;
  error: { code: string; message: string; details?: { field: string; message: string }[] };
}

/** Options of one request. */
export interface RequestOptions {
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/**
 * A small HTTP client for the cloud API as a user's program would call it: an optional
 * bearer token, and an optional client address sent as X-Forwarded-For (for gateways
 * that trust a proxy), so tests can act as different clients.
 */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly token?: string,
    readonly clientIp?: string,
  ) {}

  withToken(token: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, token, this.clientIp);
  }

  asClient(clientIp: string): ApiClient {
    return new ApiClient(this.baseUrl, this.token, clientIp);
  }

  get<T = unknown>(path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path, options);
  }

  post<T = unknown>(
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    return this.request<T>('POST', path, { ...options, body });
  }

  delete<T = unknown>(path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('DELETE', path, options);
  }

  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.token !== undefined && !('authorization' in headers))
      headers['authorization'] = `Bearer ${this.token}`;
    if (this.clientIp) headers['x-forwarded-for'] = this.clientIp;
    let body: string | Buffer | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    const isJson = response.headers.get('content-type')?.includes('application/json') ?? false;
    const parsed: unknown = isJson ? JSON.parse(text) : text;
    rememberSecrets(parsed);
    return { status: response.status, headers: response.headers, body: parsed as T };
  }
}
