import { request } from 'node:http';
import type { ApiResponse } from '@pgcloud/testing';

/**
 * One request with a Host header of the caller's choice, which fetch never sends: what a
 * browser sends when a page's own DNS name resolves to the gateway (DNS rebinding).
 */
export function requestWithHost(
  baseUrl: string,
  host: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<unknown>> {
  return new Promise((resolve, reject) => {
    const sent = request(new URL(path, baseUrl), {
      method: options.method ?? 'GET',
      headers: { ...options.headers, host },
      timeout: 30_000,
    });
    sent.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          for (const one of [value ?? []].flat()) headers.append(name, one);
        const isJson = headers.get('content-type')?.includes('application/json') ?? false;
        resolve({
          status: response.statusCode ?? 0,
          headers,
          body: isJson ? (JSON.parse(text) as unknown) : text,
        });
      });
    });
    sent.on('timeout', () => sent.destroy(new Error(`${path} did not answer in 30 s`)));
    sent.on('error', reject);
    sent.end();
  });
}
