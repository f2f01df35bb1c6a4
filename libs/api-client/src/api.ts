import type { Client } from './generated/client/index.js';
import { createClient } from './generated/client/index.js';
import type { RestoreDryRun } from './generated/types.gen.js';

/** Where the API is and who calls it. */
export interface ApiOptions {
  /** The gateway's base URL, such as `https://api.example.com`. */
  baseUrl: string;
  /** A bearer token from the device flow; operations that need none never send it. */
  token?: string;
  /** Headers sent with every request (an X-Forwarded-For in tests, say). */
  headers?: Record<string, string>;
  /** The fetch to use (a test may wrap it); the global one by default. */
  fetch?: typeof fetch;
}

/** A client for every operation of `sdk.gen.ts`: pass it as `{ client }`. */
export function createApi(options: ApiOptions): Client {
  return createClient({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    auth: options.token,
    headers: options.headers,
    fetch: options.fetch,
  });
}

/** An error answer of the API, read from its envelope. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    readonly details: readonly { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** The API could not be reached at all (refused, reset, timed out, not HTTP). */
export class ApiUnreachableError extends Error {
  override readonly name = 'ApiUnreachableError';

  constructor(
    readonly url: string,
    options: { cause: unknown },
  ) {
    super(`cannot reach the API at ${url}: ${describeCause(options.cause)}`, options);
  }
}

/** What every generated operation resolves to (the fields style of @hey-api/client-fetch). */
export interface OperationResult<T> {
  data?: { success: true; data: T } | undefined;
  error?: unknown;
  request?: Request;
  response?: Response;
}

/** The `data` an operation's successful answers carry: of each of them, when it has several. */
export type AnswerData<R extends OperationResult<unknown>> = NonNullable<R['data']>['data'];

/**
 * The `data` of a successful answer; throws ApiError for an error answer, and
 * ApiUnreachableError when no answer came.
 */
export async function unwrap<R extends OperationResult<unknown>>(
  pending: Promise<R>,
): Promise<AnswerData<R>> {
  const result = await pending;
  const response = result.response;
  if (!response)
    throw new ApiUnreachableError(result.request?.url ?? 'the API', { cause: result.error });
  if (response.ok && result.data) return result.data.data;
  throw apiErrorOf(response, result.error);
}

/** Whether a restore POST answered a plan (`?dry_run=true`) rather than a new restore. */
export function isDryRun<T>(answer: T | RestoreDryRun): answer is RestoreDryRun {
  return typeof answer === 'object' && answer !== null && 'plan' in answer;
}

/** A restore POST's answer without `?dry_run`: the restore it created. */
export function createdRestore<T>(answer: T | RestoreDryRun): T {
  if (isDryRun(answer)) throw new Error('a plan was answered where a restore was asked for');
  return answer;
}

/** The ApiError of an answer that is not a success, whatever its body. */
export function apiErrorOf(response: Response, body: unknown): ApiError {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } })
    ?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    const details = Array.isArray(error.details)
      ? (error.details as { field: string; message: string }[])
      : [];
    return new ApiError(response.status, error.code, error.message, requestId, details);
  }
  return new ApiError(
    response.status,
    `HTTP_${response.status}`,
    `the API answered ${response.status} ${response.statusText} without an error envelope`,
    requestId,
  );
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // fetch says only "fetch failed"; what failed (ECONNREFUSED, a bad port) is its cause.
  const inner = (cause as { cause?: unknown }).cause;
  if (!(inner instanceof Error)) return cause.message;
  const code = (inner as NodeJS.ErrnoException).code;
  return `${cause.message} (${code ?? inner.message})`;
}
