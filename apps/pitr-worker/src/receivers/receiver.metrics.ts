import type { WalReceiverState } from '@pgcloud/contracts';
import { WAL_RECEIVER_STATES } from '@pgcloud/contracts';
import { Counter, Gauge } from 'prom-client';

/*
 * This replica's WAL receivers as pgcloud_* metrics on prom-client's default registry
 * (served on the management port).
 *
 * No database_id label: a replica runs up to PITR_MAX_RECEIVERS receivers (50 by default,
 * 1000 at most) at a time, but databases come and go and their receivers move between
 * replicas whenever a lease changes hands, so a label per database would leave Prometheus
 * an ever-growing set of series, one per database per replica it ever ran on. The lag is
 * aggregated instead: the largest among the replica's receivers, which is what an alert
 * needs; which database it is, the API's PITR status (receiver state, recovery window)
 * and the logs tell.
 */

const live = new Set<ReceiverReport>();

/**
 * What one receiver knows of itself, for the gauges: its state as it last showed it, and
 * how far its archive lags behind the primary as of its last recorded flush interval.
 */
export class ReceiverReport {
  state: WalReceiverState = 'starting';
  /** The newest primary time the archive covers (the recovery window's `to`), in ms. */
  private coveredTo: number | undefined;
  /** This host's clock minus the primary's, as of the last sample: no skew in the lag. */
  private clockOffset = 0;
  /** WAL bytes the primary had inserted beyond what is in S3, at the last flush. */
  bytesBehind: number | undefined;

  constructor(private readonly clock: { now(): number }) {}

  /** Counted from now on (the receiver started)... */
  open(): void {
    live.add(this);
  }

  /** ...until it ended. */
  close(): void {
    live.delete(this);
  }

  /**
   * A recorded flush interval: the primary's sample, the newest sample time the archive
   * now covers (none when it has not caught up with any sample of this run), and the WAL
   * position everything below which is in S3.
   */
  flushed(sample: { at: Date; lsn: bigint }, coveredTo: Date | undefined, archived: bigint): void {
    this.clockOffset = this.clock.now() - sample.at.getTime();
    if (coveredTo) this.coveredTo = coveredTo.getTime();
    this.bytesBehind = Number(sample.lsn > archived ? sample.lsn - archived : 0n);
  }

  /** The archive began anew: nothing of the old one's window holds. */
  forget(): void {
    this.coveredTo = undefined;
    this.bytesBehind = undefined;
  }

  /**
   * Seconds between the primary's time now and the newest time the archive covers: it
   * grows while the receiver is failing or stuck, not only when a flush measures it.
   */
  lagSeconds(): number | undefined {
    if (this.coveredTo === undefined) return undefined;
    const primaryNow = this.clock.now() - this.clockOffset;
    return Math.max(0, primaryNow - this.coveredTo) / 1000;
  }
}

/** The receivers whose lag counts: a database that is not running has no WAL to archive. */
function lagging(): ReceiverReport[] {
  return [...live].filter((r) => r.state !== 'stopped');
}

new Gauge({
  name: 'pgcloud_wal_receivers',
  help: "This replica's WAL receivers, by state (starting, running, stopped, error).",
  labelNames: ['state'] as const,
  collect() {
    for (const state of WAL_RECEIVER_STATES)
      this.set({ state }, [...live].filter((r) => r.state === state).length);
  },
});

new Gauge({
  name: 'pgcloud_wal_archive_max_lag_seconds',
  help:
    "The largest lag among this replica's WAL receivers: seconds between the primary's " +
    'time now and the newest time its archive (the recovery window) covers.',
  collect() {
    this.set(Math.max(0, ...lagging().map((r) => r.lagSeconds() ?? 0)));
  },
});

new Gauge({
  name: 'pgcloud_wal_archive_max_lag_bytes',
  help:
    "The largest lag among this replica's WAL receivers, in bytes: WAL the primary had " +
    "written beyond what is in S3, at the receiver's last flush interval.",
  collect() {
    this.set(Math.max(0, ...lagging().map((r) => r.bytesBehind ?? 0)));
  },
});

/** WAL put in S3, as the flush intervals record it (bytes_received of the archives). */
export const walArchivedBytes = new Counter({
  name: 'pgcloud_wal_archived_bytes_total',
  help: "WAL bytes this replica's receivers put in S3 and recorded.",
});

/** Bytes put in S3, a segment put whole after its pieces included: what archiving costs S3. */
export const walUploadedBytes = new Counter({
  name: 'pgcloud_wal_uploaded_bytes_total',
  help: "Bytes this replica's receivers uploaded to S3 (pieces and whole segments).",
});

/** Runs that failed (pg_receivewal died, the server could not be reached...). */
export const receiverFailures = new Counter({
  name: 'pgcloud_wal_receiver_failures_total',
  help: "Failed runs of this replica's WAL receivers (each is retried with backoff).",
});
