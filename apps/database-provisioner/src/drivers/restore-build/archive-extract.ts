import type { OsUser } from '@pgcloud/postgres';
import { extractArchive } from '@pgcloud/postgres';
import type { RestoreArchive } from '../database-driver.js';
import { CorruptArchiveError } from '../database-driver.js';
import { fetchBody } from './fetched-body.js';

/** What a download may be given: a signal that stops it, and who is told its bytes so far. */
export interface DownloadOptions {
  signal?: AbortSignal;
  downloaded?: (bytes: number) => void;
}

/**
 * Downloads a base backup (a zstd tar) and extracts it into `dir` as the OS user while
 * hashing every byte (extractArchive): a changed byte is a CorruptArchiveError.
 */
export async function downloadAndExtract(
  archive: RestoreArchive,
  dir: string,
  osUser: OsUser,
  { signal, downloaded }: DownloadOptions = {},
): Promise<void> {
  const body = await fetchBody(archive.url, signal);
  if (body.statusCode !== 200) {
    body.destroy();
    throw new Error(`the backup's download answered HTTP ${body.statusCode}`);
  }
  const extracted = await extractArchive(body, dir, osUser, {
    ...(signal ? { signal } : {}),
    ...(downloaded ? { read: downloaded } : {}),
  });
  if (extracted.sha256 !== archive.sha256)
    throw new CorruptArchiveError(
      `the archive's SHA-256 is ${extracted.sha256}, not ${archive.sha256}`,
    );
  if (extracted.tarError)
    throw new Error(`tar could not extract the backup: ${extracted.tarError}`);
}
