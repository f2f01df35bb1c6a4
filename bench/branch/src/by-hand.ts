import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ConnectionDetails } from '@pgcloud/api-client';
import type { OsUser, SocketAddress } from '@pgcloud/postgres';
import { SUPERUSER, ensureOwnedDir, pgBinDir, runPgTool } from '@pgcloud/postgres';
import pg from 'pg';

/** Where the provisioner's local server for `serverId` listens: its postmaster.pid says. */
export function serverSocket(dataDir: string, serverId: string): SocketAddress {
  const pid = join(dataDir, 'local', 'servers', serverId, 'pgdata', 'postmaster.pid');
  const lines = readFileSync(pid, 'utf8').split('\n');
  return { port: Number(lines[3]), socketDir: lines[4] ?? '' };
}

/**
 * Milliseconds of a branch made by hand, as an operator would: pg_basebackup from the
 * source's server (over its socket, -X stream, a fast checkpoint, synced as by default),
 * pg_ctl start of the copy on a port of its own, and a TLS login with the database's
 * credentials (the copy keeps the source's certificate files). Then stopped and removed.
 */
export async function timeByHand(
  source: SocketAddress,
  connection: ConnectionDetails,
  osUser: OsUser,
  dir: string,
): Promise<number> {
  const binDir = pgBinDir(process.env['PG_BIN_DIR']);
  const data = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  await ensureOwnedDir(dir, osUser);
  await ensureOwnedDir(socketDir, osUser);
  const port = await spareTcpPort();
  const password = decodeURIComponent(new URL(connection.connection_string).password);
  const started = performance.now();
  try {
    const copy = ['-D', data, '-h', source.socketDir, '-p', String(source.port), '-U', SUPERUSER];
    await runPgTool(binDir, 'pg_basebackup', [...copy, '-X', 'stream', '-c', 'fast'], { osUser });
    const options = `-p ${port} -c unix_socket_directories=${socketDir} -c listen_addresses=127.0.0.1`;
    await runPgTool(
      binDir,
      'pg_ctl',
      ['start', '-w', '-D', data, '-l', join(dir, 'log'), '-o', options],
      { osUser },
    );
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: connection.user,
      password,
      database: connection.database,
      ssl: { rejectUnauthorized: false },
    });
    await client.connect();
    await client.query('SELECT 1');
    await client.end();
    return performance.now() - started;
  } finally {
    await runPgTool(binDir, 'pg_ctl', ['stop', '-D', data, '-m', 'immediate'], { osUser }).catch(
      () => undefined,
    );
    await rm(dir, { recursive: true, force: true });
  }
}

function spareTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}
