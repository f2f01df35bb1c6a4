import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SocketAddress } from '@pgcloud/postgres';
import {
  SUPERUSER,
  chownFile,
  quoteIdent,
  quoteLiteral,
  runPgTool,
  scramSha256Verifier,
  withSuperuser,
} from '@pgcloud/postgres';
import { REPLICATION_ROLE } from '../database-driver.js';
import type { ServerSpec } from '../database-driver.js';
import { autoConf } from '../restore-build/restored-data.js';
import type { DataFill } from './server-files.js';
import type { ServerPaths } from './server-paths.js';

/** What pg_basebackup writes beside the data: where the copy is consistent (its WAL range). */
const MANIFEST = 'backup_manifest';

/**
 * A branch's data: a base backup of the live source server, streamed over its socket as
 * the superuser with the WAL it needs (`-X stream`), after a fast checkpoint; the source
 * goes on taking writes. The copy starts writable: the source's hold (a fence) and its
 * ALTER SYSTEM settings (the storage limit's read-only mode) do not carry over.
 */
export function branchFill(source: SocketAddress, signal?: AbortSignal): DataFill {
  return async (paths, context) => {
    await rm(paths.pgdataPartial, { recursive: true, force: true });
    const args = ['-D', paths.pgdataPartial, '-h', source.socketDir, '-p', String(source.port)];
    args.push('-U', SUPERUSER, '-X', 'stream', '-c', 'fast', '--no-sync');
    await runPgTool(context.pgBinDir, 'pg_basebackup', args, {
      osUser: context.osUser,
      ...(signal ? { signal } : {}),
    });
    await rm(join(paths.pgdataPartial, 'standby.signal'), { force: true });
    const auto = join(paths.pgdataPartial, 'postgresql.auto.conf');
    await writeFile(auto, autoConf(), { mode: 0o600 });
    await chownFile(auto, context.osUser, 0o600);
  };
}

/**
 * Where the copy holds everything up to, from pg_basebackup's manifest in its data
 * directory (kept there, so a later attempt reads the same): the WAL range's end, and
 * when the manifest was written.
 */
export async function branchPoint(paths: ServerPaths): Promise<{ lsn: string; at: Date }> {
  const file = join(paths.pgdata, MANIFEST);
  const manifest = JSON.parse(await readFile(file, 'utf8')) as {
    'WAL-Ranges'?: { 'End-LSN'?: string }[];
  };
  const lsn = manifest['WAL-Ranges']?.at(-1)?.['End-LSN'];
  if (!lsn) throw new Error(`${MANIFEST} of the branch names no WAL range`);
  return { lsn, at: (await stat(file)).mtime };
}

/**
 * The copy takes the branch's identity: the source's application database and login role
 * renamed (once: a later attempt finds them renamed), and the branch's passwords set.
 */
export async function adoptBranchRoles(
  address: SocketAddress,
  sourceName: string,
  spec: Pick<ServerSpec, 'databaseName' | 'password' | 'replicationPassword'>,
): Promise<void> {
  const to = quoteIdent(spec.databaseName);
  await withSuperuser(address, 10_000, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname = ANY($1)',
      [[sourceName, spec.databaseName]],
    );
    const names = rows.map((row) => row.datname);
    if (sourceName !== spec.databaseName && !names.includes(spec.databaseName)) {
      const from = quoteIdent(sourceName);
      await client.query(`ALTER DATABASE ${from} RENAME TO ${to}`);
      await client.query(`ALTER ROLE ${from} RENAME TO ${to}`);
    }
    for (const [role, password] of [
      [spec.databaseName, spec.password],
      [REPLICATION_ROLE, spec.replicationPassword],
    ] as const) {
      const verifier = quoteLiteral(scramSha256Verifier(password));
      await client.query(`ALTER ROLE ${quoteIdent(role)} PASSWORD ${verifier}`);
    }
  });
}
