// The names a browser on this machine uses for the daemon. A page elsewhere that makes a
// browser resolve its own name to 127.0.0.1 (DNS rebinding) still sends that name.
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** True when a Host header names this machine's loopback, with or without a port. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase());
  if (!match) return false;
  const [, name, port] = match;
  if (port !== undefined && Number(port) > 65535) return false;
  return LOOPBACK_NAMES.has(name ?? '');
}
