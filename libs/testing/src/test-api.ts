import type { Client } from '@pgcloud/api-client';
import { createApi } from '@pgcloud/api-client';
import { rememberAnswerSecrets } from './answer-secrets.js';

/** As long as ApiClient waits: a test must not hang on an answer that never comes. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The generated API client for a test or a bench: each request gives up after 30 s, and the
 * secrets of every JSON answer are remembered for the log scan, as ApiClient's are.
 */
export function testApi(baseUrl: string, token?: string, headers?: Record<string, string>): Client {
  return createApi({ baseUrl, token, headers, fetch: scanningFetch });
}

async function scanningFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const signal = AbortSignal.any([request.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]);
  const response = await fetch(request, { signal });
  if (response.headers.get('content-type')?.includes('application/json'))
    rememberAnswerSecrets(await response.clone().json());
  return response;
}
