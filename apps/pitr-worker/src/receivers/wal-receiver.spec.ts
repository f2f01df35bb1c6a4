import { DATABASE_PATTERNS } from '@pgcloud/contracts';
import { answer, fakeRpcClient, metricValue } from '@pgcloud/testing';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, before, beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { register } from 'prom-client';
import type { BackupSource } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { segmentName, segmentStart } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import { ArchiveEntity } from '../archive/archive.entity.js';
import type { ArchiveRepository } from '../archive/archive.repository.js';
import type { ArchiveStarter } from '../archive/archive-starter.js';
import type { ReceiverLeases } from '../archive/receiver-leases.repository.js';
import type { ReceiverFlush, ReceiverProgress } from '../archive/receiver-progress.repository.js';
import type { SegmentRepository } from '../archive/segment.repository.js';
import type { PrimarySample, PrimarySessions } from './primary-session.js';
import type { ReceiverDeps } from './receiver-deps.js';
import type { ReceivewalExit, ReceivewalProcess } from './receivewal-process.js';
import type { Spool } from './spool.js';
import { WalReceiver, backoffDelay } from './wal-receiver.js';

const DATABASE = 'db_1';
const WORKER = 'worker-a';
const SOURCE = { host: '127.0.0.1', port: 5999, ca_pem: 'ca' } as BackupSource;

/** Time that passes only when the receiver waits. */
class FakeClock {
  time = 0;
  sleeps: number[] = [];
  private readonly alarms: { at: number; fire: () => void }[] = [];

  /** Runs `fire` once the clock reaches `at`. */
  at(at: number, fire: () => void): void {
    this.alarms.push({ at, fire });
  }

  now(): number {
    return this.time;
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.time += ms;
    for (const alarm of this.alarms.filter((a) => a.at <= this.time)) {
      this.alarms.splice(this.alarms.indexOf(alarm), 1);
      alarm.fire();
    }
    // A turn of the event loop, so a receiver that never stops still lets a spec time out.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A pg_receivewal that runs until it is stopped. */
function fakeProcess(): ReceivewalProcess & { stopped: boolean } {
  let endRun: (e: ReceivewalExit) => void = () => undefined;
  const process = {
    pid: 4242,
    stopped: false,
    exited: new Promise<ReceivewalExit>((resolve) => (endRun = resolve)),
    stop: () => {
      process.stopped = true;
      endRun({ code: null, signal: 'SIGTERM', stderr: '' });
    },
  };
  return process;
}

/**
 * The archive's row, the primary, S3 and the spool as one receiver sees them; `connect`
 * decides what each attempt to reach the primary does.
 */
class World {
  readonly clock = new FakeClock();
  generation = 0;
  holdsLease = true;
  lease = { safe: true };
  recordAccepted = true;
  connect: (attempt: number) => void = () => undefined;
  attempts: number[] = [];
  statuses: string[] = [];
  failures: number[] = [];
  flushes: ReceiverFlush[] = [];
  slotAdvances: bigint[] = [];
  puts: string[] = [];
  samples: PrimarySample[] = [];
  /** Where pg_receivewal has flushed to once the interval waited for it (else the sample's). */
  flushedLater: bigint | undefined;
  spoolRemoved = false;
  processes: ReturnType<typeof fakeProcess>[] = [];

  constructor(readonly directory: string) {}

  archive(): ArchiveEntity {
    return Object.assign(new ArchiveEntity(), {
      databaseId: DATABASE,
      projectId: 'prj_1',
      ownerId: 'usr_1',
      receiverGeneration: this.generation,
      timeline: 1,
      startLsn: segmentStart(3n),
      archivedLsn: segmentStart(3n),
      lastWalFile: null,
    });
  }

  deps(): ReceiverDeps {
    const archives = { find: () => Promise.resolve(this.archive()) };
    const leases = {
      holds: () => Promise.resolve(this.holdsLease),
      standing: () =>
        Promise.resolve(
          this.holdsLease ? { safe: this.lease.safe, generation: this.generation } : undefined,
        ),
    };
    const progress = {
      showStatus: (_db: string, _worker: string, status: string) => {
        this.statuses.push(status);
        return Promise.resolve();
      },
      recordFailure: () => {
        this.failures.push(this.clock.now());
        return Promise.resolve();
      },
      recordFlush: (_db: string, _worker: string, _generation: number, flush: ReceiverFlush) => {
        this.flushes.push(flush);
        return Promise.resolve(this.recordAccepted);
      },
      generation: () => Promise.resolve(this.generation),
    };
    const rpc = fakeRpcClient(
      answer(DATABASE_PATTERNS.backupSource, () => {
        this.attempts.push(this.clock.now());
        this.connect(this.attempts.length);
        return Promise.resolve(SOURCE);
      }),
    );
    let last: PrimarySample | undefined;
    const session = {
      state: () => Promise.resolve({ slotExists: true, timeline: 1 }),
      sample: () => {
        last = this.samples.shift() ?? { at: new Date(0), lsn: 0n, flushed: null, streaming: true };
        return Promise.resolve(last);
      },
      flushedReaching: () => Promise.resolve(this.flushedLater ?? last?.flushed ?? null),
      advanceSlot: (lsn: bigint) => {
        this.slotAdvances.push(lsn);
        return Promise.resolve();
      },
      close: () => Promise.resolve(),
    };
    const store = {
      put: (key: string) => {
        this.puts.push(key);
        return Promise.resolve({ etag: `"${key}"` });
      },
    };
    const spool = {
      prepare: () => Promise.resolve({ directory: this.directory, caFile: 'ca.pem' }),
      remove: () => {
        this.spoolRemoved = true;
        return Promise.resolve();
      },
    };
    return {
      archives: archives as unknown as ArchiveRepository,
      leases: leases as unknown as ReceiverLeases,
      progress: progress as unknown as ReceiverProgress,
      segments: { record: () => Promise.resolve() } as unknown as SegmentRepository,
      store: store as unknown as ObjectStore,
      rpc,
      starter: {} as ArchiveStarter,
      sessions: { open: () => Promise.resolve(session) } as unknown as PrimarySessions,
      spool: spool as unknown as Spool,
      clock: this.clock,
      startReceivewal: () => {
        const process = fakeProcess();
        this.processes.push(process);
        return process;
      },
      osUser: { switchUser: false, uid: 0, gid: 0 } as ReceiverDeps['osUser'],
      pgBinDir: '/usr/lib/postgresql/bin',
      workerId: WORKER,
      flushIntervalMs: 1000,
    };
  }
}

/** Runs a receiver until it ends by itself or `stopWhen` asks it to stop. */
async function runReceiver(world: World, stopWhen: (attempt: number) => boolean): Promise<void> {
  const receiver = new WalReceiver(DATABASE, world.deps());
  const script = world.connect;
  world.connect = (attempt) => {
    if (stopWhen(attempt)) {
      void receiver.stop();
      throw new Error('stopping');
    }
    script(attempt);
  };
  receiver.start();
  while (!receiver.finished) await new Promise((resolve) => setImmediate(resolve));
}

/** The receiver gauges as they read now (they are computed when read). */
async function gauges(): Promise<Record<string, number>> {
  const read: Record<string, number> = {};
  for (const state of ['starting', 'running', 'stopped', 'error'])
    read[state] = await metricValue('pgcloud_wal_receivers', { state });
  read.lagSeconds = await metricValue('pgcloud_wal_archive_max_lag_seconds');
  read.lagBytes = await metricValue('pgcloud_wal_archive_max_lag_bytes');
  return read;
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] ?? 0));

describe('WalReceiver', { timeout: 10_000 }, () => {
  let directory: string;
  let world: World;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'wal-receiver-'));
    world = new World(directory);
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));
  // Failures are logged as warnings: expected here, noise in the test output.
  before(() => {
    Logger.overrideLogger(false);
  });

  it('waits 1 s after a failure, doubling up to 30 s', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 20].map(backoffDelay),
      [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000],
    );
  });

  it('backs off longer after each failure in a row, and afresh after a run that ended well', async () => {
    world.connect = (attempt) => {
      if (attempt === 4)
        world.generation++; // restart-receiver: this run ends, no failure
      else throw new Error('connection refused');
    };

    await runReceiver(world, (attempt) => attempt === 6);

    assert.deepEqual(gaps(world.attempts), [1000, 2000, 4000, 0, 1000]);
    assert.equal(world.failures.length, 4);
    assert.ok(world.statuses.includes('starting'));
  });

  it('cuts a backoff short when the receiver is restarted, and counts failures afresh', async () => {
    world.connect = () => {
      throw new Error('connection refused');
    };
    // Restarted one second into the 4 s wait after the third failure.
    world.clock.at(4000, () => world.generation++);

    await runReceiver(world, (attempt) => attempt === 5);

    assert.deepEqual(gaps(world.attempts), [1000, 2000, 1000, 1000]);
  });

  it('waits for a database that is not running without counting a failure', async () => {
    world.connect = (attempt) => {
      if (attempt <= 2) throw new DomainError('DATABASE_NOT_READY', 'restoring');
      throw new Error('connection refused');
    };

    await runReceiver(world, (attempt) => attempt === 4);

    assert.deepEqual(gaps(world.attempts), [2000, 2000, 1000]);
    assert.equal(world.failures.length, 1);
    assert.deepEqual(
      world.statuses.filter((s) => s === 'stopped'),
      ['stopped', 'stopped'],
    );
  });

  it('ends for good, without a failure, once the lease is lost', async () => {
    world.holdsLease = false;

    await runReceiver(world, () => true);

    assert.deepEqual(world.attempts, []);
    assert.deepEqual(world.failures, []);
    assert.ok(world.spoolRemoved, 'its spool directory goes');
  });

  it('moves the slot only to what the record says is in S3', async () => {
    await writeFile(join(directory, segmentName(1, 3n)), 'completed segment');
    await writeFile(join(directory, `${segmentName(1, 4n)}.partial`), 'x'.repeat(64));
    world.samples = [
      { at: new Date(5000), lsn: segmentStart(4n), flushed: segmentStart(4n), streaming: true },
      {
        at: new Date(6000),
        lsn: segmentStart(4n) + 64n,
        flushed: segmentStart(4n) + 64n,
        streaming: true,
      },
    ];
    world.connect = (attempt) => {
      // The second cycle's record is refused (taken over meanwhile): the slot stays.
      if (attempt === 1) world.clock.at(1000, () => (world.recordAccepted = false));
    };

    await runReceiver(world, (attempt) => attempt === 2);

    assert.equal(world.puts.length, 2, 'the completed segment, then a piece of the next');
    assert.deepEqual(
      world.flushes.map((f) => [f.archivedLsn, f.bytesReceived, f.windowTo?.getTime()]),
      [
        [segmentStart(4n), 16 * 1024 * 1024, 5000],
        [segmentStart(4n) + 64n, 64, 6000],
      ],
    );
    assert.deepEqual(world.slotAdvances, [segmentStart(4n)]);
    assert.ok(
      world.processes.every((p) => p.stopped),
      'pg_receivewal is stopped at the end',
    );
  });

  it("reaches a sample's time in its own interval once pg_receivewal has flushed up to it", async () => {
    await writeFile(join(directory, segmentName(1, 3n)), 'completed segment');
    await writeFile(join(directory, `${segmentName(1, 4n)}.partial`), 'x'.repeat(64));
    // Sampled while the last 64 bytes were still on their way; flushed a moment after.
    world.samples = [
      {
        at: new Date(5000),
        lsn: segmentStart(4n) + 64n,
        flushed: segmentStart(4n),
        streaming: true,
      },
    ];
    world.flushedLater = segmentStart(4n) + 64n;
    world.clock.at(500, () => (world.recordAccepted = false));

    await runReceiver(world, (attempt) => attempt === 2);

    const [first] = world.flushes;
    assert.deepEqual(
      [first?.archivedLsn, first?.windowTo?.getTime()],
      [segmentStart(4n) + 64n, 5000],
    );
  });

  it('writes nothing once the lease is about to run out, and stops', async () => {
    await writeFile(join(directory, segmentName(1, 3n)), 'completed segment');
    world.lease.safe = false;

    await runReceiver(world, (attempt) => attempt === 2);

    assert.deepEqual(world.attempts.length, 1, 'not restarted');
    assert.deepEqual(world.puts, []);
    assert.deepEqual(world.flushes, []);
    assert.deepEqual(world.failures, []);
  });

  describe('metrics', () => {
    beforeEach(() => {
      register.resetMetrics();
    });

    it('counts the receiver under its state while it runs, its failures, and none once it ended', async () => {
      const seen: Promise<Record<string, number>>[] = [];
      world.connect = (attempt) => {
        if (attempt === 1) throw new Error('connection refused');
        throw new DomainError('DATABASE_NOT_READY', 'restoring');
      };
      world.clock.at(500, () => seen.push(gauges())); // backing off after the failure
      world.clock.at(2500, () => seen.push(gauges())); // waiting for the database

      await runReceiver(world, (attempt) => attempt === 3);

      const [failing, waiting] = await Promise.all(seen);
      assert.deepEqual([failing?.error, failing?.running, waiting?.stopped], [1, 0, 1]);
      assert.equal(await metricValue('pgcloud_wal_receiver_failures_total'), 1);
      assert.deepEqual(await gauges(), {
        ...{ starting: 0, running: 0, stopped: 0, error: 0 },
        ...{ lagSeconds: 0, lagBytes: 0 },
      });
    });

    it('shows the lag behind the primary, growing while the archive does not catch up', async () => {
      await writeFile(join(directory, segmentName(1, 3n)), 'completed segment');
      world.samples = [
        { at: new Date(5000), lsn: segmentStart(4n), flushed: segmentStart(4n), streaming: true },
        // The primary wrote 64 bytes more, which pg_receivewal has not flushed yet.
        { at: new Date(6000), lsn: segmentStart(4n) + 64n, flushed: null, streaming: true },
      ];
      let seen: Promise<Record<string, number>> | undefined;
      world.clock.at(2000, () => {
        seen = gauges(); // a second after the second flush, which was a second behind
        world.recordAccepted = false; // the next flush is refused: the run ends
      });

      await runReceiver(world, (attempt) => attempt === 2);

      assert.deepEqual(await seen, {
        ...{ starting: 0, running: 1, stopped: 0, error: 0 },
        ...{ lagSeconds: 2, lagBytes: 64 },
      });
      const archived = await metricValue('pgcloud_wal_archived_bytes_total');
      assert.equal(archived, 16 * 1024 * 1024, 'the completed segment, once');
    });
  });
});
