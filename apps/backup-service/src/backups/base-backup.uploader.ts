import { createHash } from 'node:crypto';
import { Transform, pipeline } from 'node:stream';
import type { BaseBackupInfo, BaseBackupSource } from '@pgcloud/postgres';
import { startBaseBackup } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';

/** A base backup as stored: where, how big, its checksum and WAL points. */
export interface UploadedBackup extends BaseBackupInfo {
  sizeBytes: number;
  checksumSha256: string;
}

/**
 * Streams pg_basebackup's archive straight into a multipart upload, hashing it on the way:
 * nothing is staged on local disk. The upload completes, and the object appears under its
 * key, only once pg_basebackup has exited cleanly; any failure aborts the upload.
 */
export class BaseBackupUploader {
  constructor(
    private readonly store: ObjectStore,
    private readonly pgBinDir: string,
    /** zstd's threads in each pg_basebackup (BACKUP_COMPRESSION_THREADS). */
    private readonly compressionThreads = 0,
  ) {}

  /**
   * `signal` aborts it (the job's lease is lost or about to lapse): pg_basebackup is
   * stopped and the upload aborted, so after the abort it sends no further part, no
   * completion and no PUT (see BackupJobs for why that keeps the object and the record one).
   */
  async upload(
    source: BaseBackupSource,
    key: string,
    signal?: AbortSignal,
  ): Promise<UploadedBackup> {
    signal?.throwIfAborted();
    const backup = await startBaseBackup({
      pgBinDir: this.pgBinDir,
      source,
      compressionThreads: this.compressionThreads,
      signal,
    });
    const cancel = (): void => backup.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    // Handled below; without this, a rejection seen first by flush() would be unhandled.
    backup.finished.catch(() => undefined);
    const hash = createHash('sha256');
    const hashed = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        callback(null, chunk);
      },
      // The archive's end is not success: hold the last part back until pg_basebackup
      // has exited 0, and fail the stream (aborting the upload) when it did not.
      flush(callback) {
        backup.finished.then(
          () => callback(),
          (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
        );
      },
    });
    pipeline(backup.archive, hashed, () => {});
    try {
      const { size } = await this.store.uploadStream(key, hashed, {
        contentType: 'application/zstd',
        signal,
      });
      const info = await backup.finished;
      return { ...info, sizeBytes: size, checksumSha256: hash.digest('hex') };
    } finally {
      signal?.removeEventListener('abort', cancel);
      backup.cancel();
    }
  }
}
