// pgBackRest's configuration for the bench: where the repository is (the stack's bucket on
// the bench's S3, over HTTPS), how it compresses and archives, and the bench's server.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { SocketAddress } from '@pgcloud/postgres';
import type { LocalS3Credentials } from '@pgcloud/devstack';

/** The stanza of the bench's database. */
export const STANZA = 'bench';

/** The bench's database server, as pgBackRest reaches it: on this host, by its socket. */
export interface BackedUpServer {
  pgdata: string;
  address: SocketAddress;
  /** Its log, where pg_ctl restart sends it again. */
  logFile: string;
}

/** Where pgBackRest's repository goes: the S3, its bucket, and the prefix of the bench. */
export interface Repository {
  s3: LocalS3Credentials & { tls: NonNullable<LocalS3Credentials['tls']> };
  bucket: string;
  prefix: string;
  /**
   * Small files bundled into larger objects (repo1-bundle), as pgBackRest's user guide
   * recommends for object stores: without it, a restore fetches each of a data directory's
   * thousand-odd files with a request of its own, which costs far more than their bytes.
   */
  bundle?: boolean;
}

/** What PgBackRest.setUp turns on beside the repository. */
export interface BackRestOptions {
  /**
   * Asynchronous archiving (archive-async, a spool directory of its own), with a queue of
   * 1 GiB for archive-get: what pgBackRest's user guide recommends for a fast archive and a
   * fast replay, archive-get fetching the segments ahead of recovery, process-max at a time.
   */
  asyncArchive?: boolean;
}

/** The lines of pgbackrest.conf: `dir` holds its logs and locks, `ca` the S3's certificate. */
export function configLines(config: {
  dir: string;
  ca: string;
  spool: string;
  server: BackedUpServer;
  repository: Repository;
  asyncArchive: boolean;
}): string[] {
  const { dir, ca, spool, server, repository, asyncArchive } = config;
  const tls = new URL(repository.s3.tls.endpoint);
  return [
    '[global]',
    'repo1-type=s3',
    `repo1-s3-endpoint=${tls.hostname}`,
    `repo1-storage-port=${tls.port}`,
    `repo1-s3-bucket=${repository.bucket}`,
    `repo1-s3-region=${repository.s3.region}`,
    `repo1-s3-key=${repository.s3.accessKeyId}`,
    `repo1-s3-key-secret=${repository.s3.secretAccessKey}`,
    'repo1-s3-uri-style=path',
    `repo1-storage-ca-file=${ca}`,
    `repo1-path=/${repository.prefix}`,
    'compress-type=zst',
    ...(repository.bundle ? ['repo1-bundle=y'] : []),
    `process-max=${availableParallelism()}`,
    ...(asyncArchive
      ? ['archive-async=y', `spool-path=${spool}`, 'archive-get-queue-max=1GiB']
      : []),
    'start-fast=y',
    `log-path=${join(dir, 'log')}`,
    `lock-path=${join(dir, 'lock')}`,
    'log-level-console=warn',
    'log-level-file=off',
    '',
    `[${STANZA}]`,
    `pg1-path=${server.pgdata}`,
    `pg1-port=${server.address.port}`,
    `pg1-socket-path=${server.address.socketDir}`,
    '',
  ];
}
