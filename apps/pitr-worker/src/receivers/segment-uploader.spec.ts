import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { segmentName, segmentStart, zstdDecompress } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { ReceiverLeases } from '../archive/receiver-leases.repository.js';
import type { ArchivedSegment, SegmentRepository } from '../archive/segment.repository.js';
import { compressedKey, pieceKey, segmentKey } from '../archive/wal-keys.js';
import { LeaseFence } from './lease-fence.js';
import type { ArchivedPosition } from './segment-uploader.js';
import { MAX_PIECES, SegmentUploader } from './segment-uploader.js';

const PROJECT = 'prj_1';
const DATABASE = 'db_1';
const GENERATION = 3;
const seg = (segno: bigint, timeline = 1) => segmentName(timeline, segno);
// No byte repeats: zstd cannot make it smaller, so it is stored as is (one object or pieces).
const UNIQUE = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** What the store in memory answers as an object's ETag: its bytes, quoted. */
const etagOf = (body: string): string => `"${body}"`;

/** S3, the segment records and the lease, in memory. */
class World {
  puts: { key: string; body: string }[] = [];
  /** Each object's bytes, as put. */
  objects = new Map<string, Buffer>();
  recorded: ArchivedSegment[] = [];
  fenceChecks = 0;
  lease = { safe: true, generation: GENERATION };

  uploader(directory: string): SegmentUploader {
    const store = {
      put: (key: string, body: Buffer) => {
        this.puts.push({ key, body: body.toString() });
        this.objects.set(key, body);
        return Promise.resolve({ etag: etagOf(body.toString()) });
      },
      list: (prefix: string) =>
        Promise.resolve(
          this.puts
            .filter((put) => put.key.startsWith(prefix))
            .map((put) => ({ key: put.key, size: put.body.length, etag: etagOf(put.body) })),
        ),
    } as unknown as ObjectStore;
    const segments = {
      record: (segment: ArchivedSegment) => {
        this.recorded.push(segment);
        return Promise.resolve();
      },
    } as unknown as SegmentRepository;
    const leases = {
      standing: () => {
        this.fenceChecks++;
        return Promise.resolve({ ...this.lease });
      },
    } as unknown as ReceiverLeases;
    const fence = new LeaseFence(DATABASE, 'worker-a', leases, GENERATION);
    return new SegmentUploader({ projectId: PROJECT, databaseId: DATABASE, directory }, fence, {
      store,
      segments,
    });
  }
}

describe('SegmentUploader', () => {
  let directory: string;
  let world: World;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'segment-uploader-'));
    world = new World();
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it('uploads each completed segment past the archive once, records it, and empties the spool', async () => {
    await writeFile(join(directory, seg(3n)), 'segment three');
    await writeFile(join(directory, seg(4n)), 'segment four');
    await writeFile(join(directory, seg(9n, 2)), 'another timeline');
    // The primary's samples: commits up to the first lie in segment 4, the second's past it.
    const inFour = new Date(Date.UTC(2026, 10, 28, 10, 0, 1));
    const position: ArchivedPosition = {
      timeline: 1,
      archived: segmentStart(4n), // segment 3 is in S3 already
      lastWalFile: seg(3n),
      samples: [
        { at: inFour, lsn: segmentStart(4n) + 100n },
        { at: new Date(Date.UTC(2026, 10, 28, 10, 0, 2)), lsn: segmentStart(5n) + 100n },
      ],
    };
    const uploader = world.uploader(directory);

    await uploader.upload(position, null);
    await uploader.upload(position, null);

    assert.deepEqual(world.puts, [
      { key: segmentKey(PROJECT, DATABASE, 1, seg(4n)), body: 'segment four' },
    ]);
    assert.deepEqual(world.recorded, [
      {
        databaseId: DATABASE,
        name: seg(4n),
        timeline: 1,
        segno: 4n,
        objectKey: segmentKey(PROJECT, DATABASE, 1, seg(4n)),
        sizeBytes: 'segment four'.length,
        etags: [etagOf('segment four')],
        coveredUntil: inFour,
      },
    ]);
    assert.equal(position.archived, segmentStart(5n));
    assert.equal(position.lastWalFile, seg(4n));
    // Uploaded or not needed, both leave the spool; another timeline's file is not ours.
    assert.deepEqual(await readdir(directory), [seg(9n, 2)]);
  });

  it('puts the segment being written in pieces, each byte once, and records it as them', async () => {
    const partial = `${seg(5n)}.partial`;
    const key = segmentKey(PROJECT, DATABASE, 1, seg(5n));
    const wal = 'first|second|last';
    await writeFile(join(directory, partial), `${wal}|unsynced`);
    const position: ArchivedPosition = {
      timeline: 1,
      archived: segmentStart(5n),
      lastWalFile: seg(4n),
    };
    const uploader = world.uploader(directory);

    await uploader.upload(position, segmentStart(5n) + 6n);
    assert.equal(position.archived, segmentStart(5n) + 6n);
    assert.equal(position.lastWalFile, partial);
    await uploader.upload(position, segmentStart(5n) + 13n);
    assert.deepEqual(world.recorded, [], 'a segment being written is not a completed one');
    await rm(join(directory, partial));
    await writeFile(join(directory, seg(5n)), wal);
    await uploader.upload(position, null);

    assert.deepEqual(world.puts, [
      { key: pieceKey(key, 0, 6), body: 'first|' },
      { key: pieceKey(key, 6, 13), body: 'second|' },
      { key: pieceKey(key, 13, wal.length), body: 'last' },
    ]);
    assert.deepEqual(world.recorded, [
      {
        databaseId: DATABASE,
        name: seg(5n),
        timeline: 1,
        segno: 5n,
        objectKey: key,
        sizeBytes: wal.length,
        etags: [etagOf('first|'), etagOf('second|'), etagOf('last')],
        coveredUntil: null,
        pieceEnds: [6, 13, wal.length],
      },
    ]);
    assert.equal(position.archived, segmentStart(6n));
    assert.deepEqual(await readdir(directory), []);
  });

  it('goes on with the pieces in S3 after a restart, and begins at 0 where there are none', async () => {
    const partial = `${seg(5n)}.partial`;
    const key = segmentKey(PROJECT, DATABASE, 1, seg(5n));
    await writeFile(join(directory, partial), 'first|second|');
    world.puts.push({ key: pieceKey(key, 0, 6), body: 'first|' });
    const restarted = { timeline: 1, archived: segmentStart(5n) + 6n, lastWalFile: partial };
    await world.uploader(directory).upload(restarted, segmentStart(5n) + 13n);
    assert.deepEqual(world.puts.at(-1), { key: pieceKey(key, 6, 13), body: 'second|' });

    // An archive that begins inside a segment: pg_receivewal writes it from the start.
    world.puts = [];
    const begun = { timeline: 1, archived: segmentStart(5n) + 6n, lastWalFile: null };
    await world.uploader(directory).upload(begun, segmentStart(5n) + 13n);
    assert.deepEqual(world.puts, [{ key: pieceKey(key, 0, 13), body: 'first|second|' }]);
  });

  it('records a segment whose last piece went up before a restart, without putting it again', async () => {
    const key = segmentKey(PROJECT, DATABASE, 1, seg(5n));
    world.puts.push({ key: pieceKey(key, 0, 6), body: 'first|' });
    world.puts.push({ key: pieceKey(key, 6, 11), body: 'last!' });
    await writeFile(join(directory, seg(5n)), 'first|last!');
    const position = { timeline: 1, archived: segmentStart(5n) + 6n, lastWalFile: null };

    await world.uploader(directory).upload(position, null);

    assert.equal(world.puts.length, 2, 'nothing put again');
    assert.deepEqual(world.recorded[0]?.pieceEnds, [6, 11]);
    assert.equal(position.archived, segmentStart(6n));
  });

  it('starts the pieces of a slowly written segment over from its start at the limit', async () => {
    const key = segmentKey(PROJECT, DATABASE, 1, seg(5n));
    const partial = `${seg(5n)}.partial`;
    await writeFile(join(directory, partial), UNIQUE.slice(0, MAX_PIECES + 1));
    const position = { timeline: 1, archived: segmentStart(5n), lastWalFile: null };
    const uploader = world.uploader(directory);

    for (let synced = 1n; synced <= BigInt(MAX_PIECES); synced++)
      await uploader.upload(position, segmentStart(5n) + synced);

    assert.deepEqual(world.puts.at(-2)?.key, pieceKey(key, MAX_PIECES - 2, MAX_PIECES - 1));
    assert.deepEqual(world.puts.at(-1), {
      key: pieceKey(key, 0, MAX_PIECES),
      body: UNIQUE.slice(0, MAX_PIECES),
    });
    await rm(join(directory, partial));
    await writeFile(join(directory, seg(5n)), UNIQUE.slice(0, MAX_PIECES + 1));
    await uploader.upload(position, null);
    assert.deepEqual(world.recorded[0]?.pieceEnds, [MAX_PIECES, MAX_PIECES + 1]);
  });

  it('puts a segment of too many pieces whole', async () => {
    const key = segmentKey(PROJECT, DATABASE, 1, seg(5n));
    const wal = UNIQUE.slice(0, MAX_PIECES + 1);
    for (let i = 0; i < MAX_PIECES; i++)
      world.puts.push({ key: pieceKey(key, i, i + 1), body: wal.slice(i, i + 1) });
    await writeFile(join(directory, seg(5n)), wal);
    const position = {
      timeline: 1,
      archived: segmentStart(5n) + BigInt(MAX_PIECES),
      lastWalFile: null,
    };

    await world.uploader(directory).upload(position, null);

    assert.deepEqual(world.puts.at(-1), { key, body: wal });
    assert.equal(world.recorded[0]?.pieceEnds, undefined, 'recorded as one object');
  });

  it('stores a completed segment compressed in one object, whatever pieces it went up in', async () => {
    const key = segmentKey(PROJECT, DATABASE, 1, seg(5n));
    const wal = 'insert into orders '.repeat(1000);
    await writeFile(join(directory, `${seg(5n)}.partial`), wal);
    const position = { timeline: 1, archived: segmentStart(5n), lastWalFile: seg(4n) };
    const uploader = world.uploader(directory);
    await uploader.upload(position, segmentStart(5n) + 100n);
    await rm(join(directory, `${seg(5n)}.partial`));
    await writeFile(join(directory, seg(5n)), wal);

    await uploader.upload(position, null);

    const stored = world.objects.get(compressedKey(key)) ?? Buffer.alloc(0);
    assert.equal((await zstdDecompress(stored, wal.length)).toString(), wal);
    assert.deepEqual(world.recorded, [
      {
        databaseId: DATABASE,
        name: seg(5n),
        timeline: 1,
        segno: 5n,
        objectKey: compressedKey(key),
        sizeBytes: wal.length,
        zstdBytes: stored.length,
        etags: [etagOf(stored.toString())],
        coveredUntil: null,
      },
    ]);
    assert.ok(stored.length < wal.length / 10, `${stored.length} bytes`);
    assert.deepEqual(
      world.puts.map((p) => p.key),
      [pieceKey(key, 0, 100), compressedKey(key)],
      'the pieces stay for restores planned before, until the sweep',
    );
    assert.equal(position.archived, segmentStart(6n));
  });

  it('puts no piece once the lease is about to run out or the receiver was restarted', async () => {
    await writeFile(join(directory, `${seg(5n)}.partial`), 'synced-part');
    const flushed = segmentStart(5n) + 6n;
    for (const lease of [
      { safe: false, generation: GENERATION },
      { safe: true, generation: GENERATION + 1 },
    ]) {
      world.lease = lease;
      const position = { timeline: 1, archived: segmentStart(5n), lastWalFile: seg(4n) };
      await world.uploader(directory).upload(position, flushed);
      assert.deepEqual(world.puts, []);
      assert.equal(position.archived, segmentStart(5n), 'the archive does not move on');
    }
  });

  it('puts no piece that would not move the archive on', async () => {
    await writeFile(join(directory, `${seg(5n)}.partial`), 'synced-part');
    const position = { timeline: 1, archived: segmentStart(5n) + 6n, lastWalFile: seg(5n) };

    await world.uploader(directory).upload(position, segmentStart(5n) + 6n);
    await world.uploader(directory).upload(position, segmentStart(5n) + 2n);
    await world.uploader(directory).upload(position, null);

    assert.deepEqual(world.puts, []);
    assert.equal(world.fenceChecks, 0, 'nothing to write, nothing to check');
  });
});
