// A bench's bulk database on a local S3 of its own served over HTTPS, for the benches that
// set pgBackRest beside pgcloud: pgBackRest speaks S3 only over TLS, and the stack's apps
// then use the same HTTPS endpoint, so every target meets the same TLS.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OsUser } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import { LocalS3 } from '@pgcloud/devstack';
import type { BulkDatabase } from './bench-database.js';
import { bulkDatabase } from './bench-database.js';
import type { BackRestOptions, BackedUpServer, Repository } from './pgbackrest-config.js';
import { PgBackRest } from './pgbackrest.js';
import type { Cleanup } from './run-bench.js';

const S3_GIB = 48;

/** The bench's database server on this host: its folder, data, socket and log. */
export interface BenchServer extends BackedUpServer {
  serverDir: string;
}

/** The bulk database, the S3 it runs on (HTTPS) and the stack's bucket there. */
export interface HttpsS3Database {
  bulk: BulkDatabase;
  s3: Repository['s3'];
  bucketName: string;
  /** The stack's bucket, reached over HTTP from this process (see below). */
  bucket: ObjectStore;
  server: BenchServer;
}

/**
 * Starts a local S3 of the bench's own, then the bulk database (bulkDatabase) on a stack
 * whose apps reach that S3 over HTTPS. Everything is undone by the cleanups: the S3 last,
 * after the stack has stopped.
 */
export async function bulkDatabaseOnHttpsS3(
  cleanups: Cleanup[],
  projectName: string,
  rows: number,
  env: Record<string, string> = {},
): Promise<HttpsS3Database> {
  const s3Dir = await mkdtemp(join(tmpdir(), 'pgcloud-bench-s3-'));
  // Room for a bench's archives: pitr keeps some 4 GB of WAL per size in pgcloud's archive
  // and about half that in pgBackRest's (the store is a sparse file: it costs what it holds).
  const localS3 = new LocalS3(s3Dir, { sizeGib: S3_GIB });
  const removeS3 = async () => {
    await localS3.destroy();
    await rm(s3Dir, { recursive: true, force: true });
  };
  let bulk: BulkDatabase;
  let s3: Repository['s3'];
  try {
    const started = await localS3.start();
    const { tls } = started;
    if (!tls) throw new Error('the local S3 serves no HTTPS');
    bulk = await bulkDatabase(cleanups, projectName, rows, {
      S3_ENDPOINT: tls.endpoint,
      S3_REGION: started.region,
      S3_ACCESS_KEY_ID: started.accessKeyId,
      S3_SECRET_ACCESS_KEY: started.secretAccessKey,
      NODE_EXTRA_CA_CERTS: tls.certFile,
      ...env,
    });
    s3 = { ...started, tls };
    // The apps run with the HTTPS endpoint; this process does not trust RGW's certificate
    // (NODE_EXTRA_CA_CERTS is read at start), so the stack's own cleanup of its bucket
    // reaches the same S3 over HTTP.
    bulk.stack.env['S3_ENDPOINT'] = started.endpoint;
  } finally {
    // After the stack has stopped.
    cleanups.push(removeS3);
  }
  const bucketName = bulk.stack.env['S3_BUCKET'] ?? 'pgcloud';
  const bucket = new ObjectStore({ ...s3, bucket: bucketName, forcePathStyle: true });
  cleanups.unshift(() => Promise.resolve(bucket.close()));
  return { bulk, s3, bucketName, bucket, server: benchServer(bulk) };
}

/** Where the local driver keeps the bulk database's server (libs/devstack's local servers). */
export function benchServer(bulk: BulkDatabase): BenchServer {
  const serverDir = join(bulk.stack.dataDir, 'local', 'servers', bulk.database.platform_service_id);
  return {
    serverDir,
    pgdata: join(serverDir, 'pgdata'),
    address: { socketDir: join(serverDir, 'socket'), port: bulk.connection.port },
    logFile: join(serverDir, 'postgresql.log'),
  };
}

/** Bytes of a data directory as `du -sb` counts them: what a base backup copies, WAL included. */
export function dataDirectoryBytes(pgdata: string): number {
  const du = spawnSync('du', ['-sb', pgdata], { encoding: 'utf8' });
  // A live server's files come and go while du walks them (a segment archived, its .done
  // removed): du says so, exits 1 and counts the rest, which is all a size needs.
  const said = du.stderr.split('\n').filter(Boolean);
  const vanished =
    du.status === 1 && said.every((line) => line.endsWith('No such file or directory'));
  if (du.status !== 0 && !vanished) throw new Error(`du -sb ${pgdata} failed: ${du.stderr.trim()}`);
  return Number(du.stdout.split('\t')[0]);
}

/**
 * pgBackRest set up for the bulk database (PgBackRest.setUp), its repository under a prefix
 * of the stack's id in the stack's bucket, files bundled with `bundle`, archiving
 * asynchronous with `asyncArchive`; before the stack
 * stops, archiving is turned off again and the repository removed.
 */
export async function setUpPgBackRest(
  cleanups: Cleanup[],
  db: HttpsS3Database,
  osUser: OsUser,
  { bundle = false, ...options }: { bundle?: boolean } & BackRestOptions = {},
): Promise<PgBackRest> {
  const prefix = `pgbackrest-${db.bulk.stack.id}`;
  const backRest = await PgBackRest.setUp(
    db.bulk.scratchDir,
    osUser,
    db.server,
    {
      s3: db.s3,
      bucket: db.bucketName,
      prefix,
      bundle,
    },
    options,
  );
  cleanups.unshift(() => backRest.remove(db.bucket, prefix));
  return backRest;
}
