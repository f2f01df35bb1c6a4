import { isIP } from 'node:net';

/**
 * True for a host name or address that only this machine reaches: `localhost`, any
 * 127.x address, or ::1 (with or without the brackets a URL puts around it). For settings
 * such as listen addresses and PUBLIC_BASE_URL's host.
 */
export function isLoopbackAddress(host: string): boolean {
  const name = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || name === '::1') return true;
  return isIP(name) === 4 && name.startsWith('127.');
}
