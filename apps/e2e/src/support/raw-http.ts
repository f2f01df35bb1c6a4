import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
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

/**
 * Sends a request head one byte a second, as a slow or hostile client holds a socket, and
 * answers what the server wrote back and after how long it closed the connection (-1:
 * still open after `limitMs`).
 */
export async function dripHead(
  baseUrl: string,
  path: string,
  limitMs: number,
): Promise<{ elapsedMs: number; answer: string }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined); // a byte written as the server closes
  await once(socket, 'connect');
  const startedAt = Date.now();
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  const closed = once(socket, 'close').then(() => Date.now() - startedAt);
  const head = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(60)}`;
  const dripping = (async () => {
    for (const byte of head) {
      if (socket.destroyed) return;
      socket.write(byte);
      await sleep(1000);
    }
  })();
  const elapsedMs = await Promise.race([closed, sleep(limitMs).then(() => -1)]);
  socket.destroy();
  await dripping;
  return { elapsedMs, answer };
}
