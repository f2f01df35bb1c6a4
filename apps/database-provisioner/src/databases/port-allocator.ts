import { createServer } from 'node:net';

/**
 * The lowest port of the range that no record holds and nothing on this host listens on,
 * or undefined when there is none: the deployment has no room for another server.
 * The records' unique index settles a race between two creates.
 */
export async function allocatePort(
  range: { first: number; last: number },
  taken: ReadonlySet<number>,
  host: string,
): Promise<number | undefined> {
  for (let port = range.first; port <= range.last; port++) {
    if (!taken.has(port) && (await isFree(host, port))) return port;
  }
  return undefined;
}

function isFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
