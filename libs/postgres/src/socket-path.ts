import { join } from 'node:path';

// sockaddr_un's sun_path is 108 bytes with its NUL; PostgreSQL refuses longer socket paths.
const MAX_SOCKET_PATH = 107;

/**
 * Throws when a server's socket in `socketDir` would pass the kernel's limit, naming the
 * setting that put it there: PostgreSQL would fail at start with a less helpful message.
 */
export function assertSocketPathFits(
  socketDir: string,
  port: number,
  setting: { name: string; value: string },
): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`not a port: ${port}`);
  const length = Buffer.byteLength(join(socketDir, `.s.PGSQL.${port}`));
  if (length > MAX_SOCKET_PATH) {
    throw new Error(
      `${setting.name} (${setting.value}) is too deep: server sockets under it would have ` +
        `${length}-byte paths, more than the ${MAX_SOCKET_PATH} the kernel allows; ` +
        `choose a shorter ${setting.name}`,
    );
  }
}
