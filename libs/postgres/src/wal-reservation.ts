import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { BaseBackupSource } from './base-backup.js';

/** WAL kept on the server until `release()`; a lost session lets it go by itself. */
export interface WalReservation {
  readonly slotName: string;
  release(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Holds the server's WAL from now on: a temporary physical replication slot, created with
 * its WAL reserved, in a session of the replication role that stays open until release.
 * With `pg_basebackup -X fetch` the WAL written during the backup must still be on the
 * server at its end; checkpoints would recycle it under writes, and the backup would fail
 * with "requested WAL segment ... has already been removed". A temporary slot is dropped
 * with its session, so a crashed or cut-off backup holds nothing back afterwards.
 */
export async function reserveWal(login: BaseBackupSource): Promise<WalReservation> {
  const slotName = `pgcloud_backup_${randomBytes(8).toString('hex')}`;
  const client = new pg.Client({
    host: login.host,
    port: login.port,
    database: 'postgres',
    user: login.user,
    password: login.password,
    ssl: { ca: login.caPem, rejectUnauthorized: true },
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'pgcloud_backup_wal',
  });
  // A session the server ends surfaces as an 'error' event; the backup fails on its own.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [slotName]);
  } catch (err) {
    await client.end().catch(() => undefined);
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      `could not reserve WAL for the backup: ${reason.replaceAll(login.password, '***')}`,
    );
  }
  let released: Promise<void> | undefined;
  return {
    slotName,
    release: () => (released ??= client.end().catch(() => undefined)),
  };
}
