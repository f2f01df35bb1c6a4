import { once } from 'node:events';
import type { Server } from 'node:net';
import { createServer } from 'node:net';

/**
 * Where test servers listen: below the kernel's ephemeral range (32768 and up here), which
 * outgoing connections take their local ports from, so a connection opened between the
 * pick and the listen cannot hold the port; and below the provisioner's database ports of
 * test stacks (20000 and up).
 */
const FIRST = 10_000;
const LAST = 19_999;
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port on 127.0.0.1 that nothing listens on right now, never the same twice here. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 1000; tries++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${FIRST}-${LAST}`);
}

/** Starts `server` on a port of 127.0.0.1 the kernel picks; answers its http://127.0.0.1:<port>. */
export async function listenOnLoopback(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
}
