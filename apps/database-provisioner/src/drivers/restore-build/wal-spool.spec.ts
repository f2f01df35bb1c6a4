import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { listenOnLoopback } from '@pgcloud/testing';
import { WAL_SEGMENT_BYTES, zstdCompress } from '@pgcloud/postgres';
import type { RestoreSegment } from '../database-driver.js';
import { BrokenWalError } from '../database-driver.js';
import { recordedMd5 } from './segment-fetch.js';
import { spoolFiles, startWalSpool } from './wal-spool.js';

const OS_USER = { name: 'x', uid: 0, gid: 0, switchUser: false };
const OVERSIZED = Buffer.alloc(WAL_SEGMENT_BYTES + 1);
const NAMES = ['000000010000000000000003', '000000010000000000000004', '000000010000000000000005'];

/** restore_command as PostgreSQL runs it: a shell, the file's name and where it goes. */
async function restoreCommand(command: string, name: string, to: string): Promise<number | null> {
  const child = spawn('sh', ['-c', command.replace('%f', name).replace('%p', to)], {
    stdio: 'ignore',
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

/** Waits until `done` holds, looking every 20 ms, for at most 5 s (a loaded machine is slow). */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('WAL spool', () => {
  let dir: string;
  let server: Server;
  let baseUrl: string;
  // Each segment's answer waits for its gate; a segment listed in `failing` answers 500.
  const gates = new Map<string, Promise<void>>();
  const failing = new Set<string>();
  const missing = new Set<string>();
  const oversized = new Set<string>();
  // What /<name>/zst answers: a segment stored compressed, or anything put in its place.
  const stored = new Map<string, Buffer>();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pgcloud-spool-'));
    gates.clear();
    failing.clear();
    missing.clear();
    oversized.clear();
    stored.clear();
    // Each segment in two pieces: /<name>/1 answers `wal of `, /<name>/2 the name.
    server = createServer((request, response) => {
      const [name = '', piece] = (request.url ?? '').slice(1).split('/');
      void (gates.get(name) ?? Promise.resolve()).then(() => {
        if (failing.has(name)) return void response.writeHead(500).end();
        if (missing.has(name)) return void response.writeHead(404).end();
        if (oversized.has(name)) return void response.writeHead(200).end(OVERSIZED);
        if (piece === 'zst') return void response.writeHead(200).end(stored.get(name));
        response.writeHead(200).end(Buffer.from(piece === '1' ? 'wal of ' : name));
      });
    });
    baseUrl = await listenOnLoopback(server);
  });

  afterEach(async () => {
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const segments = (): RestoreSegment[] =>
    NAMES.map((name) => ({
      name,
      urls: [`${baseUrl}/${name}/1`, `${baseUrl}/${name}/2`],
      partial: true,
      sizeBytes: `wal of ${name}`.length,
    }));

  /** A gate held shut until the function it answers is called. */
  function hold(name: string): () => void {
    let open = () => {};
    gates.set(name, new Promise<void>((resolve) => (open = resolve)));
    return open;
  }

  it('hands restore_command a segment once it is in, waiting for it meanwhile', async () => {
    const release = hold(NAMES[1] ?? '');
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER);
    const target = join(dir, 'RECOVERYXLOG');
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[0] ?? '', target), 0);
    assert.equal((await stat(target)).size, WAL_SEGMENT_BYTES, 'padded to a whole segment');
    assert.equal((await stat(target)).nlink, 2, 'linked, not copied, beside the spool');

    let done = false;
    const waiting = restoreCommand(spool.restoreCommand, NAMES[1] ?? '', target).then((code) => {
      done = true;
      return code;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(done, false, 'restore_command waits for a planned segment on its way');
    release();
    assert.equal(await waiting, 0);
    const copied = await readFile(target);
    assert.equal(copied.toString('latin1').replace(/\0+$/, ''), `wal of ${NAMES[1]}`);
    const log = await readFile(spoolFiles(join(dir, 'spool')).replayLog, 'utf8');
    assert.deepEqual(log.trim().split('\n'), [NAMES[0], NAMES[1]]);
    await spool.stop();
    assert.equal(spool.failure(), undefined);
  });

  it('fails at once for a file that was not planned: the end of the archive', async () => {
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER);
    const target = join(dir, 'RECOVERYXLOG');
    for (const name of ['000000010000000000000006', '00000002.history'])
      assert.equal(await restoreCommand(spool.restoreCommand, name, target), 1);
    await spool.stop();
  });

  it('aborts recovery when a segment cannot be copied in, or the spool is gone', async () => {
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER);
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[0] ?? '', join(dir, 'a')), 0);
    // In, but its copy fails: never "not in the archive", which would end recovery there.
    const nowhere = join(dir, 'no-such-dir', 'RECOVERYXLOG');
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[0] ?? '', nowhere), 255);
    await spool.stop();
    await rm(join(dir, 'spool'), { recursive: true });
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[1] ?? '', join(dir, 'x')), 255);
  });

  it('aborts recovery once a fetch failed, rather than end it early', async () => {
    failing.add(NAMES[1] ?? '');
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER);
    const target = join(dir, 'RECOVERYXLOG');
    // Above 125: PostgreSQL stops with FATAL instead of taking it for the archive's end.
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[1] ?? '', target), 255);
    assert.match(String(spool.failure()), /HTTP 500/);
    await spool.stop();
  });

  it('checks each object against the MD5 the archive recorded for it', async () => {
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    const recorded = segments().map((segment) => ({
      ...segment,
      etags: [`"${md5('wal of ')}"`, md5(segment.name)],
    }));
    const good = await startWalSpool(recorded, join(dir, 'good'), OS_USER);
    for (const name of NAMES)
      assert.equal(await restoreCommand(good.restoreCommand, name, join(dir, 'x')), 0);
    await good.stop();
    assert.equal(good.failure(), undefined);

    // The second object of the second segment is not what was stored; a multipart ETag
    // (no MD5 of the bytes) is not checked.
    const changed = recorded.map((segment, i) =>
      i === 1 ? { ...segment, etags: [`${md5('x')}-2`, md5('something else')] } : segment,
    );
    const bad = await startWalSpool(changed, join(dir, 'bad'), OS_USER);
    assert.equal(await restoreCommand(bad.restoreCommand, NAMES[1] ?? '', join(dir, 'y')), 255);
    assert.ok(bad.failure() instanceof BrokenWalError);
    assert.match(String(bad.failure()), /WAL segment \w+ \(object 2\) is not the bytes archived/);
    await bad.stop();
  });

  it('decompresses a segment stored compressed, and fails one that does not', async () => {
    const whole = (name: string) =>
      Buffer.concat([Buffer.from(`wal of ${name}`), Buffer.alloc(WAL_SEGMENT_BYTES - 31)]);
    for (const name of NAMES) stored.set(name, await zstdCompress(whole(name)));
    const compressed = (): RestoreSegment[] =>
      NAMES.map((name) => ({
        name,
        urls: [`${baseUrl}/${name}/zst`],
        partial: false,
        sizeBytes: WAL_SEGMENT_BYTES,
        compression: 'zstd',
      }));
    const good = await startWalSpool(compressed(), join(dir, 'good'), OS_USER);
    const [first = ''] = NAMES;
    assert.equal(await restoreCommand(good.restoreCommand, first, join(dir, 'x')), 0);
    assert.deepEqual(await readFile(join(dir, 'x')), whole(first));
    await good.stop();

    // Not zstd at all; zstd of too few bytes for a segment.
    const [, second = '', third = ''] = NAMES;
    for (const [name, put, problem] of [
      [second, Buffer.from('not zstd'), /does not decompress: zstd failed/],
      [third, await zstdCompress(Buffer.from('short')), /has 5 bytes, not 16777216/],
    ] as const) {
      for (const other of NAMES) stored.set(other, await zstdCompress(whole(other)));
      stored.set(name, put);
      const bad = await startWalSpool(compressed(), join(dir, `bad-${name}`), OS_USER);
      assert.equal(await restoreCommand(bad.restoreCommand, name, join(dir, 'y')), 255);
      assert.ok(bad.failure() instanceof BrokenWalError);
      assert.match(String(bad.failure()), problem);
      await bad.stop();
    }
  });

  it('fetches its head start only, until the base backup is in', async () => {
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER, undefined, {
      headStart: 1,
    });
    const [first = '', , last = ''] = NAMES;
    assert.equal(await restoreCommand(spool.restoreCommand, first, join(dir, 'x')), 0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await assert.rejects(stat(join(dir, 'spool', last)), { code: 'ENOENT' });
    spool.baseIsIn();
    assert.equal(await restoreCommand(spool.restoreCommand, last, join(dir, 'y')), 0);
    await spool.stop();
    assert.equal(spool.failure(), undefined);
  });

  it('keeps its fetches a few segments ahead of replay, never holding replay up', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `0000000100000000000000${10 + i}`);
    const many = names.map((name) => ({
      name,
      urls: [`${baseUrl}/${name}/1`, `${baseUrl}/${name}/2`],
      partial: true,
      sizeBytes: `wal of ${name}`.length,
    }));
    // What the store was asked for: a segment's first piece is asked for once its fetch starts.
    const asked = new Set<string>();
    server.on('request', (request: { url?: string }) => {
      const [name = '', piece] = (request.url ?? '').slice(1).split('/');
      if (piece === '1') asked.add(name);
    });
    const ahead = 3;
    const spool = await startWalSpool(many, join(dir, 'spool'), OS_USER, undefined, {
      headStart: 2,
      ahead,
    });
    spool.baseIsIn();
    await until(() => asked.size >= ahead);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(asked.size, ahead, 'held at `ahead` while replay has asked for none');
    for (const [i, name] of names.entries()) {
      assert.equal(await restoreCommand(spool.restoreCommand, name, join(dir, 'x')), 0, name);
      assert.ok(asked.size <= i + 1 + ahead, `${asked.size} asked after ${i + 1} replayed`);
    }
    await spool.stop();
    assert.equal(spool.failure(), undefined);
  });

  // A fetcher held back past a cancel would wait for replay, and replay for it: the timeout.
  it(
    'fails its fetches once the restore is cancelled, even those held back',
    { timeout: 10_000 },
    async () => {
      const cancel = new AbortController();
      const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER, cancel.signal, {
        headStart: 1,
        ahead: 1,
      });
      assert.equal(await restoreCommand(spool.restoreCommand, NAMES[0] ?? '', join(dir, 'x')), 0);
      spool.baseIsIn();
      // The second segment in, the fetchers wait for replay to ask for it.
      const second = join(dir, 'spool', NAMES[1] ?? '');
      await until(() =>
        stat(second).then(
          () => true,
          () => false,
        ),
      );
      cancel.abort();
      assert.equal(await restoreCommand(spool.restoreCommand, NAMES[2] ?? '', join(dir, 'y')), 255);
      assert.ok(spool.failure(), 'the cancel is the failure');
      await spool.stop();
    },
  );

  it('takes a complete segment missing from the store for a broken archive', async () => {
    missing.add(NAMES[2] ?? '');
    // The others, short for complete segments, stay on their way: the missing one fails first.
    hold(NAMES[0] ?? '');
    hold(NAMES[1] ?? '');
    const complete = segments().map((segment) => ({ ...segment, partial: false }));
    const spool = await startWalSpool(complete, join(dir, 'spool'), OS_USER);
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[2] ?? '', join(dir, 'x')), 255);
    assert.ok(spool.failure() instanceof BrokenWalError);
    assert.match(String(spool.failure()), /is missing from the object store/);
    await spool.stop();
  });

  it('takes a piece of the segment still being written, gone, for an old plan', async () => {
    missing.add(NAMES[2] ?? '');
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER);
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[2] ?? '', join(dir, 'x')), 255);
    assert.ok(spool.failure() && !(spool.failure() instanceof BrokenWalError), 'retried');
    await spool.stop();
  });

  it('refuses a segment longer than a segment as it comes', async () => {
    oversized.add(NAMES[0] ?? '');
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER);
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[0] ?? '', join(dir, 'x')), 255);
    assert.match(String(spool.failure()), /more than 16777216 bytes/);
    assert.ok(spool.failure() instanceof BrokenWalError);
    await spool.stop();
  });

  it('reads an ETag as an MD5 only when it is one', () => {
    assert.equal(recordedMd5('"0123456789ABCDEF0123456789abcdef"'), '0123456789abcdef'.repeat(2));
    for (const etag of [null, undefined, '', '"abc"', `${'a'.repeat(32)}-3`])
      assert.equal(recordedMd5(etag), undefined, String(etag));
  });

  it('fails a fetch that stalls, aborting recovery rather than keep it waiting', async () => {
    hold(NAMES[0] ?? '');
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER, undefined, {
      fetchTimeoutMs: 300,
    });
    assert.equal(await restoreCommand(spool.restoreCommand, NAMES[0] ?? '', join(dir, 'x')), 255);
    assert.match(String(spool.failure()), /WAL segment \w+ did not come down in 0.3 s/);
    await spool.stop();
  });

  it('lets a waiting restore_command go, failing, once stopped', async () => {
    hold(NAMES[2] ?? '');
    const spool = await startWalSpool(segments(), join(dir, 'spool'), OS_USER);
    const waiting = restoreCommand(spool.restoreCommand, NAMES[2] ?? '', join(dir, 'x'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopped = spool.stop();
    server.closeAllConnections();
    await stopped;
    assert.equal(await waiting, 255);
    assert.equal(spool.failure(), undefined, 'a stop is no failure');
  });

  it('refuses a segment name that is not one', async () => {
    const bad: RestoreSegment[] = [{ urls: [baseUrl], partial: false, sizeBytes: 0, name: '../x' }];
    await assert.rejects(startWalSpool(bad, join(dir, 'spool'), OS_USER), /not a WAL segment/);
  });
});
