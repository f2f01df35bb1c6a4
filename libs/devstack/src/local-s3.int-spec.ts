import { tmpdir } from 'node:os';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { CreateMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3';
import { ObjectStore } from '@pgcloud/storage';
import { eventually } from '@pgcloud/testing';
import type { LocalS3Credentials } from './local-s3.js';
import { LocalS3 } from './local-s3.js';

const MiB = 1024 * 1024;

// Against a real Ceph RGW: it checks signatures and expiry as S3 does, which is the point.
describe('ObjectStore on the local S3 (Ceph RGW)', () => {
  // The temp folder keeps Ceph's admin socket paths short wherever the checkout is.
  const dir = join(tmpdir(), `pgcloud-s3-${randomBytes(4).toString('hex')}`);
  const s3 = new LocalS3(dir);
  let credentials: LocalS3Credentials;
  let store: ObjectStore;

  before(async () => {
    let t = performance.now();
    await s3.start();
    const setupMs = performance.now() - t;
    await s3.stop();
    t = performance.now();
    credentials = await s3.start();
    const restartMs = performance.now() - t;
    console.log(
      `local S3: first setup and start ${(setupMs / 1000).toFixed(1)} s, ` +
        `restart ${(restartMs / 1000).toFixed(1)} s`,
    );
    store = new ObjectStore({ ...credentials, bucket: 'pgcloud-test' });
  });

  after(async () => {
    store?.close();
    await s3.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the bucket once and accepts being asked again', async () => {
    await store.ensureBucket();
    await store.ensureBucket();
    assert.deepEqual(await store.list('nothing/'), []);
  });

  it('round-trips a streamed 20 MB upload byte for byte', async () => {
    const data = randomBytes(20 * MiB);
    const t = performance.now();
    const { size } = await store.uploadStream('big/one.bin', Readable.from(chunked(data, MiB)), {
      contentType: 'application/octet-stream',
    });
    const seconds = (performance.now() - t) / 1000;
    console.log(`20 MB streamed upload: ${seconds.toFixed(2)} s`);
    assert.equal(size, data.length);
    const hash = createHash('sha256');
    for await (const chunk of await store.getStream('big/one.bin')) hash.update(chunk as Buffer);
    assert.equal(hash.digest('hex'), sha256(data));
  });

  it('serves the same bucket over HTTPS, to clients that trust its certificate', async () => {
    const { tls } = credentials;
    assert.ok(tls, 'a new cluster serves HTTPS too');
    const data = randomBytes(1000);
    await store.uploadStream('tls/one.bin', Readable.from([data]));
    const overTls = new ObjectStore({
      ...credentials,
      endpoint: tls.endpoint,
      bucket: 'pgcloud-test',
    });
    try {
      const url = await overTls.presignedGet('tls/one.bin', { expiresInSeconds: 60 });
      assert.match(url, /^https:\/\/127\.0\.0\.1:/);
      const ca = readFileSync(tls.certFile);
      const body = await new Promise<Buffer>((resolve, reject) => {
        httpsGet(url, { ca }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(Buffer.concat(chunks)));
        }).on('error', reject);
      });
      assert.equal(sha256(body), sha256(data));
      await assert.rejects(fetch(url), 'a client that does not trust it is refused');
    } finally {
      overTls.close();
    }
  });

  it('takes uploads over HTTPS as UNSIGNED-PAYLOAD, and their links still need no header', async () => {
    const { tls } = credentials;
    assert.ok(tls);
    // A process that trusts the certificate, as the apps do through NODE_EXTRA_CA_CERTS.
    const script = `
      import { createHash } from 'node:crypto';
      import { Readable } from 'node:stream';
      import { ObjectStore } from '@pgcloud/storage';
      const store = new ObjectStore(JSON.parse(process.env.STORE));
      const sent = new Set();
      store.client.middlewareStack.add((next, context) => (args) => {
        if (context.commandName === 'UploadPartCommand') sent.add(args.request.headers['x-amz-content-sha256']);
        return next(args);
      }, { step: 'finalizeRequest', name: 'spy' });
      const data = Buffer.alloc(40 * 1024 * 1024, 7);
      await store.uploadStream('tls/parts.bin', Readable.from([data.subarray(0, 20e6), data.subarray(20e6)]));
      await store.put('tls/small.txt', Buffer.from('small'));
      const url = await store.presignedGet('tls/parts.bin', { expiresInSeconds: 60 });
      const got = Buffer.from(await (await fetch(url)).arrayBuffer());
      const same = createHash('sha256').update(got).digest('hex') === createHash('sha256').update(data).digest('hex');
      console.log(JSON.stringify({ same, sent: [...sent] }));
      store.close();
    `;
    const settings = { ...credentials, endpoint: tls.endpoint, bucket: 'pgcloud-test' };
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', script],
      {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.certFile, STORE: JSON.stringify(settings) },
      },
    );
    assert.deepEqual(JSON.parse(stdout), { same: true, sent: ['UNSIGNED-PAYLOAD'] });
    assert.deepEqual((await store.list('tls/')).map((o) => o.key).sort(), [
      'tls/one.bin',
      'tls/parts.bin',
      'tls/small.txt',
    ]);
  });

  it('serves a pre-signed URL to plain fetch, as an attachment under the given name', async () => {
    const data = randomBytes(1000);
    await store.uploadStream('dl/backup.tar', Readable.from([data]));
    const url = await store.presignedGet('dl/backup.tar', {
      expiresInSeconds: 60,
      downloadFileName: 'db backup 2026.tar',
    });
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.match(
      res.headers.get('content-disposition') ?? '',
      /^attachment;.*"db backup 2026\.tar"/,
    );
    assert.equal(sha256(Buffer.from(await res.arrayBuffer())), sha256(data));
  });

  it('refuses a tampered pre-signed URL', async () => {
    await store.uploadStream('dl/secret.txt', Readable.from([Buffer.from('secret')]));
    const url = new URL(await store.presignedGet('dl/secret.txt', { expiresInSeconds: 60 }));
    const signature = url.searchParams.get('X-Amz-Signature') ?? '';
    const first = signature[0] === '0' ? '1' : '0';
    url.searchParams.set('X-Amz-Signature', first + signature.slice(1));
    const res = await fetch(url);
    await res.body?.cancel();
    assert.equal(res.status, 403);
  });

  it('refuses an expired pre-signed URL', async () => {
    const url = await store.presignedGet('dl/secret.txt', { expiresInSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const res = await fetch(url);
    await res.body?.cancel();
    assert.equal(res.status, 403);
  });

  it('leaves no incomplete multipart upload when the source fails midway', async () => {
    // Fails after 20 MiB: past the first parts, so a multipart upload was begun.
    function* failing(): Generator<Buffer> {
      for (let i = 0; i < 20; i++) yield randomBytes(MiB);
      throw new Error('source broke');
    }
    await assert.rejects(
      store.uploadStream('broken/upload.bin', Readable.from(failing())),
      /source broke/,
    );
    assert.deepEqual(await store.listIncompleteUploads('broken/'), []);
    assert.deepEqual(await store.list('broken/'), []);
  });

  it('aborts an upload when its signal is aborted: no object, and its parts go', async () => {
    // 20 MiB, then a source that never ends: only the signal can stop the upload.
    async function* endless(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 20; i++) yield randomBytes(MiB);
      await new Promise(() => undefined);
    }
    const controller = new AbortController();
    const upload = store.uploadStream('aborted/upload.bin', Readable.from(endless()), {
      signal: controller.signal,
    });
    upload.catch(() => undefined);
    await eventually(async () =>
      assert.equal((await store.listIncompleteUploads('aborted/')).length, 1),
    );
    controller.abort(new Error('the job lease was lost'));
    await assert.rejects(upload, /the job lease was lost/);
    await eventually(async () => {
      assert.deepEqual(await store.listIncompleteUploads('aborted/'), []);
      assert.deepEqual(await store.list('aborted/'), []);
    });
  });

  it('lists and aborts multipart uploads that were left incomplete', async () => {
    // Begun behind the store's back, as by a process that died mid-upload.
    const { endpoint, region, accessKeyId, secretAccessKey } = credentials;
    const client = new S3Client({
      endpoint,
      region,
      credentials: { accessKeyId, secretAccessKey },
      forcePathStyle: true,
    });
    const started = await client.send(
      new CreateMultipartUploadCommand({ Bucket: store.bucket, Key: 'left/over.bin' }),
    );
    client.destroy();
    const incomplete = await store.listIncompleteUploads('left/');
    assert.deepEqual(
      incomplete.map((u) => [u.key, u.uploadId]),
      [['left/over.bin', started.UploadId]],
    );
    assert.equal(await store.abortIncompleteUploads('left/'), 1);
    assert.deepEqual(await store.listIncompleteUploads('left/'), []);
  });

  it('removes everything under a prefix and nothing else', async () => {
    for (const key of ['tmp/a', 'tmp/b/c', 'tmp/b/d', 'keep/e']) {
      await store.uploadStream(key, Readable.from([Buffer.from(key)]));
    }
    assert.equal(await store.deletePrefix('tmp/'), 3);
    assert.deepEqual(await store.list('tmp/'), []);
    assert.deepEqual(
      (await store.list('keep/')).map((o) => o.key),
      ['keep/e'],
    );
    await store.delete('keep/e');
    assert.deepEqual(await store.list('keep/'), []);
  });
});

function* chunked(data: Buffer, size: number): Generator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
