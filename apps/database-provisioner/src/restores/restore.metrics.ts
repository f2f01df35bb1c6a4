import { Gauge, Histogram } from 'prom-client';
import type { RestoreBuildStep } from '../drivers/database-driver.js';
import type { RestoreEntity } from './restore.entity.js';

/*
 * Restores as pgcloud_* metrics on prom-client's default registry (served on the
 * management port). Labelled by what the restore is, never which: `kind` (backup, pitr),
 * `target` (in_place, target_database), `phase` and `outcome`, all fixed in code.
 */

/** A restore's phases, in order; a retry after a crash mid-swap runs only the last two. */
export type RestorePhase =
  /** target_database: the new database's own server made (its port, certificate, roles). */
  | 'create'
  /** in_place: the live server put on hold (read-only whatever its clients send). */
  | 'hold'
  /** The plan fetched: for pitr, once the archive reached the target time. */
  | 'plan'
  /** in_place: the WAL receiver of the database paused. */
  | 'pause_archive'
  /** The build, as the driver times it (RestoreOutcome.stepSeconds). */
  | RestoreBuildStep
  /** The live data swapped for the restored, and a TLS login to it checked. */
  | 'swap'
  /** The old data removed, the hold lifted, the server writable. */
  | 'finish';

// A second (a hold) to hours (a large download, or replaying days of WAL).
const BUCKETS = [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400];

export const restorePhaseSeconds = new Histogram({
  name: 'pgcloud_restore_phase_duration_seconds',
  help: 'How long the phases of restores that completed them took, by kind, target and phase.',
  labelNames: ['kind', 'target', 'phase'] as const,
  buckets: BUCKETS,
});

export const restoreSeconds = new Histogram({
  name: 'pgcloud_restore_duration_seconds',
  help: 'How long restore attempts took, by kind, target and outcome (completed, failed).',
  labelNames: ['kind', 'target', 'outcome'] as const,
  buckets: BUCKETS,
});

/** Times one attempt at a restore: each phase it completes, and the whole attempt. */
export class RestoreTimer {
  private readonly labels: { kind: string; target: string };
  private readonly endAttempt: (labels: { outcome: string }) => void;

  constructor(restore: RestoreEntity) {
    const target = restore.targetDatabaseId === null ? 'in_place' : 'target_database';
    this.labels = { kind: restore.kind, target };
    this.endAttempt = restoreSeconds.startTimer(this.labels);
  }

  /** Runs one phase; observed when it completes (a failed one is in the attempt's time). */
  async phase<T>(phase: RestorePhase, work: () => Promise<T>): Promise<T> {
    const end = restorePhaseSeconds.startTimer({ ...this.labels, phase });
    const result = await work();
    end();
    return result;
  }

  /** The build's steps, as the driver timed them. */
  steps(seconds: Record<RestoreBuildStep, number>): void {
    for (const [phase, value] of Object.entries(seconds))
      restorePhaseSeconds.observe({ ...this.labels, phase }, value);
  }

  end(outcome: 'completed' | 'failed'): void {
    this.endAttempt({ outcome });
  }
}

let countOverdue: (() => Promise<number>) | undefined;

/** Tells the gauge below how to count overdue restores (OverdueRestores, at start). */
export function reportOverdueRestores(count: () => Promise<number>): void {
  countOverdue = count;
}

/**
 * Restores running more than three times as long as this deployment's estimate for their
 * work (docs/api/restores.md#plan), counted from the records at each scrape.
 */
export const restoresOverdue = new Gauge({
  name: 'pgcloud_restores_overdue',
  help: 'Restores running over three times as long as their estimate.',
  async collect() {
    if (countOverdue) this.set(await countOverdue());
  },
});
