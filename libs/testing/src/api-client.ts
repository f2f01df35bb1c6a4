import { rememberAnswerSecrets } from './answer-secrets.js';

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

  patch<T = unknown>(
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    return this.request<T>('PATCH', path, { ...options, body });
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
    rememberAnswerSecrets(parsed);
    return { status: response.status, headers: response.headers, body: parsed as T };
  }
}
