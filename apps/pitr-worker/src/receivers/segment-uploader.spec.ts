import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { segmentName, segmentStart } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { ReceiverLeases } from '../archive/receiver-leases.js';
import type { ArchivedSegment, SegmentRepository } from '../archive/segment.repository.js';
import { partialKey, segmentKey } from '../archive/wal-keys.js';
import { LeaseFence } from './lease-fence.js';
import type { ArchivedPosition } from './segment-uploader.js';
import { SegmentUploader } from './segment-uploader.js';

const PROJECT = 'prj_1';
const DATABASE = 'db_1';
const GENERATION = 3;
const seg = (segno: bigint, timeline = 1) => segmentName(timeline, segno);

/** S3, the segment records and the lease, in memory. */
class World {
  puts: { key: string; body: string }[] = [];
  recorded: ArchivedSegment[] = [];
  fenceChecks = 0;
  lease = { safe: true, generation: GENERATION };

  uploader(directory: string): SegmentUploader {
    const store = {
      put: (key: string, body: Buffer) => {
        this.puts.push({ key, body: body.toString() });
        return Promise.resolve();
      },
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
    const position: ArchivedPosition = {
      timeline: 1,
      archived: segmentStart(4n), // segment 3 is in S3 already
      lastWalFile: seg(3n),
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
      },
    ]);
    assert.equal(position.archived, segmentStart(5n));
    assert.equal(position.lastWalFile, seg(4n));
    // Uploaded or not needed, both leave the spool; another timeline's file is not ours.
    assert.deepEqual(await readdir(directory), [seg(9n, 2)]);
  });

  it('puts the segment being written as far as pg_receivewal synced it, while the lease holds', async () => {
    const partial = `${seg(5n)}.partial`;
    await writeFile(join(directory, partial), 'synced-part|unsynced');
    const position: ArchivedPosition = {
      timeline: 1,
      archived: segmentStart(5n),
      lastWalFile: seg(4n),
    };
    const flushed = segmentStart(5n) + BigInt('synced-part'.length);

    await world.uploader(directory).upload(position, flushed);

    assert.deepEqual(world.puts, [
      { key: partialKey(PROJECT, DATABASE, 1, seg(5n)), body: 'synced-part' },
    ]);
    assert.deepEqual(world.recorded, [], 'a .partial is not a completed segment');
    assert.equal(position.archived, flushed);
    assert.equal(position.lastWalFile, partial);
    assert.deepEqual(await readdir(directory), [partial], 'the segment being written stays');
  });

  it('puts no .partial once the lease is about to run out or the receiver was restarted', async () => {
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

  it('puts no .partial that would not move the archive on', async () => {
    await writeFile(join(directory, `${seg(5n)}.partial`), 'synced-part');
    const position = { timeline: 1, archived: segmentStart(5n) + 6n, lastWalFile: seg(5n) };

    await world.uploader(directory).upload(position, segmentStart(5n) + 6n);
    await world.uploader(directory).upload(position, segmentStart(5n) + 2n);
    await world.uploader(directory).upload(position, null);

    assert.deepEqual(world.puts, []);
    assert.equal(world.fenceChecks, 0, 'nothing to write, nothing to check');
  });
});
