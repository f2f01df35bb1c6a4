import type { ObjectStoreOptions } from './object-store.js';

/** The settings that name the S3 store and its bucket, by their environment names. */
export interface StorageSettings {
  /** Base URL of the S3 API: `http://127.0.0.1:7480`, `https://s3.eu-west-1.amazonaws.com`. */
  S3_ENDPOINT: string;
  /** Region the requests are signed for; S3-compatible stores mostly accept `us-east-1`. */
  S3_REGION: string;
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
  /** The one bucket pgcloud keeps its objects in; made at start when missing. */
  S3_BUCKET: string;
}

/** The `ObjectStore` options these settings name (path-style addressing). */
export function objectStoreOptions(settings: StorageSettings): ObjectStoreOptions {
  return {
    endpoint: settings.S3_ENDPOINT,
    region: settings.S3_REGION,
    accessKeyId: settings.S3_ACCESS_KEY_ID,
    secretAccessKey: settings.S3_SECRET_ACCESS_KEY,
    bucket: settings.S3_BUCKET,
  };
}
