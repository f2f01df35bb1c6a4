import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { listenOnLoopback } from '@pgcloud/testing';
import { CorruptArchiveError } from '../database-driver.js';
import { downloadAndExtract } from './archive-extract.js';

const OS_USER = { name: 'x', uid: 0, gid: 0, switchUser: false };
const run = promisify(execFile);

describe('base backup download (in a thread of its own)', () => {
  let dir: string;
  let server: Server;
  let baseUrl: string;
  let archive: Buffer;
  let sha256: string;
  // Held shut until opened: the answer's last bytes wait for it.
  let gate: Promise<void> = Promise.resolve();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pgcloud-download-'));
    // A data directory of 3 MiB that does not compress (the thread tells the bytes read a
    // MiB at a time), as a zstd tar: the form backups are stored in.
    const source = join(dir, 'source');
    await mkdir(join(source, 'base'), { recursive: true });
    await writeFile(join(source, 'PG_VERSION'), '15\n');
    await writeFile(join(source, 'base', '1'), randomBytes(3 << 20));
    await run('sh', ['-c', `tar -C '${source}' -cf - . | zstd -q -c > '${dir}/backup.tar.zst'`]);
    archive = await readFile(join(dir, 'backup.tar.zst'));
    sha256 = createHash('sha256').update(archive).digest('hex');
    gate = Promise.resolve();
    server = createServer((request, response) => {
      if (request.url === '/missing') return void response.writeHead(404).end();
      const half = Math.floor(archive.length / 2);
      const body = request.url === '/changed' ? Buffer.from(archive) : archive;
      if (request.url === '/changed') body[half] = (body[half] ?? 0) ^ 1;
      response.writeHead(200, { 'content-length': body.length });
      response.write(body.subarray(0, half));
      void gate.then(() => response.end(body.subarray(half)));
    });
    baseUrl = await listenOnLoopback(server);
  });

  afterEach(async () => {
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('extracts the archive and tells its bytes as they come, the last one included', async () => {
    const target = join(dir, 'data');
    await mkdir(target);
    const told: number[] = [];
    await downloadAndExtract({ url: `${baseUrl}/backup`, sha256 }, target, OS_USER, {
      downloaded: (bytes) => told.push(bytes),
    });
    assert.equal(await readFile(join(target, 'PG_VERSION'), 'utf8'), '15\n');
    assert.equal((await readFile(join(target, 'base', '1'))).length, 3 << 20);
    assert.equal(told.at(-1), archive.length);
  });

  it('takes a changed byte for a corrupt archive', async () => {
    const target = join(dir, 'data');
    await mkdir(target);
    await assert.rejects(
      downloadAndExtract({ url: `${baseUrl}/changed`, sha256 }, target, OS_USER),
      (err: unknown) => err instanceof CorruptArchiveError && /SHA-256/.test(err.message),
    );
  });

  it('says what the store answered when it is not the archive', async () => {
    await assert.rejects(
      downloadAndExtract({ url: `${baseUrl}/missing`, sha256 }, dir, OS_USER),
      /answered HTTP 404/,
    );
  });

  it('stops when cancelled, with the reason it was given, leaving no extraction running', async () => {
    const target = join(dir, 'data');
    await mkdir(target);
    let open = () => {};
    gate = new Promise<void>((resolve) => (open = resolve));
    const cancel = new AbortController();
    const download = downloadAndExtract({ url: `${baseUrl}/backup`, sha256 }, target, OS_USER, {
      signal: cancel.signal,
      downloaded: () => cancel.abort(new Error('cancelled by its owner')),
    });
    await assert.rejects(download, /cancelled by its owner/);
    open();
    const { stdout } = await run('sh', [
      '-c',
      `ps -eo args | grep -c '[t]ar -x .* ${target}' || true`,
    ]);
    assert.equal(stdout.trim(), '0');
  });
});
