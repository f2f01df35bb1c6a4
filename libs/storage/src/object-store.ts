import type { Readable } from 'node:stream';
import { Transform, pipeline } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

/** Where the objects live and who we are there. */
export interface ObjectStoreOptions {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
  /** Bucket in the path, not the host name: what RGW, MinIO and a bare IP need. */
  forcePathStyle?: boolean;
}

/** An object as a listing shows it. */
export interface StoredObject {
  key: string;
  size: number;
  lastModified?: Date;
  /** What the store says of the object's bytes; another put of other bytes changes it. */
  etag?: string;
}

/** A multipart upload that was started and neither completed nor aborted. */
export interface IncompleteUpload {
  key: string;
  uploadId: string;
  initiated?: Date;
}

// 16 MiB parts, two at a time: at most 32 MiB of a stream in memory per upload, and
// objects up to 160 GiB (S3 takes 10,000 parts). Parts of 8 MiB cost half again as much
// CPU per byte here (bench/results/2026-11-26-backup-throughput.md).
const PART_SIZE = 16 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;
// DeleteObjects takes at most 1000 keys.
const DELETE_BATCH = 1000;

/** One bucket of an S3-compatible store: streamed uploads, pre-signed downloads, cleanup. */
export class ObjectStore {
  readonly bucket: string;
  private readonly client: S3Client;

  constructor(options: ObjectStoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      credentials: {
        accessKeyId: options.accessKeyId,
        secretAccessKey: options.secretAccessKey,
      },
      forcePathStyle: options.forcePathStyle ?? true,
      // The SDK's default CRC checksums are not understood by every S3-compatible store
      // (older RGW, s3rver); send and check them only where S3 requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    if (new URL(options.endpoint).protocol === 'https:') unsignedUploads(this.client);
  }

  /** Makes the bucket unless it exists; safe to call at every start. */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      // Another process made it between our two requests.
      if (!(err instanceof S3ServiceException && err.name === 'BucketAlreadyOwnedByYou')) throw err;
    }
  }

  /**
   * Streams `body` to `key` in parts, so its length need not be known; answers the bytes
   * stored. When the stream or a request fails, the multipart upload is aborted, so no
   * parts are left to take space. `signal` aborts it: the answer rejects at once with the
   * signal's reason, no part, completion or PUT is sent after the abort (one already in
   * flight still lands), and the multipart upload is aborted as the part loop winds down.
   */
  async uploadStream(
    key: string,
    body: Readable,
    options: { contentType?: string; signal?: AbortSignal } = {},
  ): Promise<{ size: number }> {
    const { signal } = options;
    signal?.throwIfAborted();
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        callback(null, chunk);
      },
    });
    // pipeline destroys `counted` with the source's error, which fails the upload's read.
    pipeline(body, counted, () => {});
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: counted, ContentType: options.contentType },
      partSize: PART_SIZE,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    // Upload.abort() raises a flag its part loop checks before every request; failing the
    // stream too keeps the loop from waiting on a source that may never end.
    const abort = (): void => {
      void upload.abort();
      counted.destroy(abortReason(signal));
    };
    signal?.addEventListener('abort', abort, { once: true });
    try {
      await upload.done();
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      throw err;
    } finally {
      signal?.removeEventListener('abort', abort);
    }
    return { size };
  }

  /**
   * Writes a small object whole (one PUT), replacing what was under `key`; answers its
   * ETag, as the store reports it.
   */
  async put(
    key: string,
    body: Buffer,
    options: { contentType?: string } = {},
  ): Promise<{ etag: string | undefined }> {
    const out = await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentLength: body.length,
        ContentType: options.contentType,
      }),
    );
    return { etag: out.ETag };
  }

  /**
   * A URL that downloads `key` without credentials until it expires; with `downloadFileName`
   * the browser saves it under that name.
   */
  presignedGet(
    key: string,
    options: { expiresInSeconds: number; downloadFileName?: string },
  ): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition:
        options.downloadFileName === undefined
          ? undefined
          : attachmentDisposition(options.downloadFileName),
    });
    return getSignedUrl(this.client, command, { expiresIn: options.expiresInSeconds });
  }

  /** The object's bytes as a stream. */
  async getStream(key: string): Promise<Readable> {
    const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    if (!out.Body) throw new Error(`object ${key} has no body`);
    return out.Body as Readable;
  }

  /** Removes one object; removing a missing one is no error, as in S3. */
  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Removes every object whose key starts with `prefix`; answers how many. */
  async deletePrefix(prefix: string): Promise<number> {
    const objects = await this.list(prefix);
    return this.deleteKeys(objects.map((o) => o.key));
  }

  /** Removes the objects under `keys` (missing ones are no error); answers how many. */
  async deleteKeys(keys: readonly string[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const out = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((key) => ({ Key: key })), Quiet: true },
        }),
      );
      // DeleteObjects answers 200 even when some keys failed; those are in Errors.
      const failed = out.Errors ?? [];
      if (failed.length > 0) {
        const first = failed[0];
        throw new Error(
          `could not delete ${failed.length} of ${batch.length} object(s), ` +
            `first ${first?.Key}: ${first?.Code} ${first?.Message}`,
        );
      }
      deleted += batch.length;
    }
    return deleted;
  }

  /** Every object whose key starts with `prefix`, in key order. */
  async list(prefix: string): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      const out = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of out.Contents ?? []) {
        if (o.Key !== undefined)
          found.push({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified, etag: o.ETag });
      }
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return found;
  }

  /** Multipart uploads under `prefix` that were neither completed nor aborted. */
  async listIncompleteUploads(prefix: string): Promise<IncompleteUpload[]> {
    const found: IncompleteUpload[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const out = await this.client.send(
        new ListMultipartUploadsCommand({
          Bucket: this.bucket,
          Prefix: prefix,
          KeyMarker: keyMarker,
          UploadIdMarker: uploadIdMarker,
        }),
      );
      for (const u of out.Uploads ?? []) {
        if (u.Key !== undefined && u.UploadId !== undefined)
          found.push({ key: u.Key, uploadId: u.UploadId, initiated: u.Initiated });
      }
      if (!out.IsTruncated) return found;
      keyMarker = out.NextKeyMarker;
      uploadIdMarker = out.NextUploadIdMarker;
    }
  }

  /**
   * Aborts the incomplete multipart uploads under `prefix`, freeing their parts; answers
   * how many.
   */
  async abortIncompleteUploads(prefix: string): Promise<number> {
    const uploads = await this.listIncompleteUploads(prefix);
    for (const u of uploads) {
      try {
        await this.client.send(
          new AbortMultipartUploadCommand({
            Bucket: this.bucket,
            Key: u.key,
            UploadId: u.uploadId,
          }),
        );
      } catch (err) {
        // Completed or aborted by its owner since we listed it.
        if (httpStatus(err) !== 404) throw err;
      }
    }
    return uploads.length;
  }

  /**
   * Empties the bucket (objects and unfinished uploads) and removes it; nothing when it
   * does not exist. For throwaway buckets, such as a test run's.
   */
  async removeBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      if (httpStatus(err) === 404) return;
      throw err;
    }
    await this.abortIncompleteUploads('');
    await this.deletePrefix('');
    await this.client.send(new DeleteBucketCommand({ Bucket: this.bucket }));
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }
}

/**
 * Content-Disposition for a download under `fileName`: a plain ASCII `filename` for old
 * clients and an RFC 5987 `filename*` that keeps any character.
 */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  return new Error(typeof reason === 'string' ? reason : 'the upload was aborted');
}

function httpStatus(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined;
}

/**
 * Over HTTPS, uploaded bodies go as UNSIGNED-PAYLOAD instead of with a SHA-256 of each part
 * in their signature, as other AWS SDKs do by default: TLS already guards the bytes, and
 * that hash took about a seventh of a backup upload's CPU here. Only uploads: a pre-signed link must
 * not come to require the header.
 */
function unsignedUploads(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (UPLOADS.has(context.commandName ?? '') && request.headers)
        request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    },
    { step: 'build', name: 'pgcloudUnsignedUploads' },
  );
}

const UPLOADS = new Set(['PutObjectCommand', 'UploadPartCommand']);
