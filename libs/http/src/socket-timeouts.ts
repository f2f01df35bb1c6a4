import type { Server } from 'node:http';

/** How long a client may take, in milliseconds (SocketTimeoutsEnv's settings). */
export interface SocketTimeouts {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_KEEPALIVE_TIMEOUT_MS: number;
}

// Node looks for requests past their timeouts this often (30 s unless told): a quarter of
// the head's timeout, at most a second, so a slow client is cut off close to its time.
const MAX_CHECK_EVERY_MS = 1000;

/**
 * Sets a server's socket timeouts before it listens: a client that has not sent its whole
 * request head, or its whole request, in time is answered 408 and its socket closed; an
 * idle keep-alive connection closes. A slow client cannot hold a socket for long.
 */
export function applySocketTimeouts(server: Server, timeouts: SocketTimeouts): void {
  server.headersTimeout = timeouts.HTTP_HEADERS_TIMEOUT_MS;
  server.requestTimeout = Math.max(
    timeouts.HTTP_REQUEST_TIMEOUT_MS,
    timeouts.HTTP_HEADERS_TIMEOUT_MS,
  );
  server.keepAliveTimeout = timeouts.HTTP_KEEPALIVE_TIMEOUT_MS;
  // Read by Node when the server starts listening.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    Math.min(MAX_CHECK_EVERY_MS, Math.ceil(timeouts.HTTP_HEADERS_TIMEOUT_MS / 4));
}
