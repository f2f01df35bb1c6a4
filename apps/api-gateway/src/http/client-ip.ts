import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** What a client's address is read from: its socket and its headers. */
export type ClientRequest = Pick<IncomingMessage, 'headers' | 'socket'>;

/**
 * The client's address (spec/decisions.md section 3): the socket's, or behind `trustedProxies`
 * proxies the address the outermost of them saw, which is the `trustedProxies`-th
 * X-Forwarded-For entry from the right. Entries further left are the client's own words.
 * With fewer entries than proxies, the leftmost one is the furthest address known; an
 * entry that is not an IP address counts as none (the nearest proxy's socket answers).
 */
export function clientIp(req: ClientRequest, trustedProxies: number): string {
  const socketAddress = req.socket.remoteAddress ?? 'unknown';
  if (trustedProxies === 0) return socketAddress;
  const header = req.headers['x-forwarded-for'];
  const entries = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const entry = entries[Math.max(0, entries.length - trustedProxies)];
  // Anything but an address (a port appended, words) would make a bucket of its own.
  return entry !== undefined && isIP(entry) !== 0 ? entry : socketAddress;
}
