import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** What a client's address is read from: its socket and its headers. */
export type ClientRequest = Pick<IncomingMessage, 'headers' | 'socket'>;

/**
 * The client's address (docs/operating.md#before-others-reach-it, TRUST_PROXY): the
 * socket's, or behind `trustedProxies` proxies the address the outermost of them saw, which
 * is the `trustedProxies`-th X-Forwarded-For entry from the right. Entries further left
 * are the client's own words. With fewer entries than proxies, the leftmost one is the
 * furthest address known; an entry that is not an IP address counts as none (the nearest
 * proxy's socket answers).
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

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * The address a client's IP bucket is named by: an IPv4 address itself (an IPv4-mapped
 * IPv6 one too); an IPv6 address by its /64 prefix, since one subscriber's network usually
 * holds a whole /64 and could otherwise take a bucket per address.
 */
export function bucketAddress(ip: string): string {
  const address = ip.replace(/%.*$/, ''); // a link-local zone names no other network
  if (isIP(address) !== 6) return ip;
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped?.[1]) return mapped[1];
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, in hexadecimal without leading zeros. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const groupsOf = (part: string): string[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group];
          // A dotted IPv4 ending (64:ff9b::192.0.2.1): two groups.
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => Number.parseInt(group, 16).toString(16));
}
