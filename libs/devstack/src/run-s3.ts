import { ObjectStore, objectStoreOptions } from '@pgcloud/storage';
import type { LocalS3Credentials } from './local-s3.js';
import { LocalS3 } from './local-s3.js';

/** The storage settings every app reads (libs/storage), by their environment names. */
export function s3Env(credentials: LocalS3Credentials): Record<string, string> {
  return {
    S3_ENDPOINT: credentials.endpoint,
    S3_REGION: credentials.region,
    S3_ACCESS_KEY_ID: credentials.accessKeyId,
    S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  };
}

/**
 * The S3 a run uses: the one S3_ENDPOINT names, or else a local S3 (single-node Ceph RGW)
 * started in `dir`. Answers the settings to add (none when S3_ENDPOINT is set) and the
 * local S3 when one was started, for the caller to stop.
 */
export async function provideS3(
  env: Record<string, string | undefined>,
  dir: string,
): Promise<{ env: Record<string, string>; localS3?: LocalS3 }> {
  if (env['S3_ENDPOINT']) return { env: {} };
  const localS3 = new LocalS3(dir);
  return { env: s3Env(await localS3.start()), localS3 };
}

/** The bucket these settings name, as the services see it: for tests that look into S3. */
export function bucketOf(env: Record<string, string | undefined>): ObjectStore {
  return new ObjectStore(
    objectStoreOptions({
      S3_ENDPOINT: env['S3_ENDPOINT'] ?? '',
      S3_REGION: env['S3_REGION'] ?? 'us-east-1',
      S3_ACCESS_KEY_ID: env['S3_ACCESS_KEY_ID'] ?? '',
      S3_SECRET_ACCESS_KEY: env['S3_SECRET_ACCESS_KEY'] ?? '',
      S3_BUCKET: env['S3_BUCKET'] ?? 'pgcloud',
    }),
  );
}

/** Removes a test run's bucket with everything in it (only `pgcloud-test-` buckets). */
export async function removeRunBucket(env: Record<string, string | undefined>): Promise<void> {
  const bucket = env['S3_BUCKET'] ?? '';
  if (!bucket.startsWith('pgcloud-test-') || !env['S3_ENDPOINT']) return;
  const store = bucketOf(env);
  try {
    await store.removeBucket();
  } finally {
    store.close();
  }
}
