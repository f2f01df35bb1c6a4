import type { RestorePhase } from '@pgcloud/contracts';
import { RESTORE_PHASES } from '@pgcloud/contracts';
import type { RestoreBuildProgress, RestoreBuildStep } from '../drivers/database-driver.js';
import type { RestoreEntity } from './restore.entity.js';

/** What the tracker writes to the restore's record. */
export type ProgressFields = Pick<
  RestoreEntity,
  'phase' | 'bytesDone' | 'bytesTotal' | 'walFilesDone' | 'walFilesTotal' | 'etaSeconds'
>;

/** The phase each step of the build is shown as. */
const PHASE_OF_STEP: Record<RestoreBuildStep, RestorePhase> = {
  download: 'downloading',
  recover: 'replaying',
  check: 'checking',
};
// The numbers are written this often at most unless told (every 2 s at most is asked).
const DEFAULT_WRITE_EVERY_MS = 1000;

/** Where the work of one phase of this attempt began: when, and how much was done then. */
interface Measured {
  since: number;
  from: number;
}

/**
 * A running restore's phase and numbers, written to its record as they move on: a phase
 * at once, the bytes of a download and the segments of a replay once every `writeEveryMs`
 * at most (RESTORE_PROGRESS_INTERVAL_MS), one write at a time and in order. Neither goes back: a retried attempt shows its phase
 * once it passes the one shown, and its numbers once they pass those counted.
 *
 * `eta_seconds` is what is left of the phase under way (the download's bytes, the
 * replay's segments) at the rate this attempt has measured in it; null until it has
 * measured one, and in the short phases after them (checking, swapping); 0 when done.
 */
export class RestoreTracker {
  private fields: ProgressFields;
  private written = 0;
  private writing: Promise<void> = Promise.resolve();
  private downloading?: Measured;
  private replaying?: Measured;

  constructor(
    record: RestoreEntity,
    private readonly write: (fields: ProgressFields) => Promise<unknown>,
    private readonly failed: (err: unknown) => void,
    private readonly now: () => number = Date.now,
    private readonly writeEveryMs: number = DEFAULT_WRITE_EVERY_MS,
  ) {
    this.fields = {
      phase: record.phase,
      bytesDone: record.bytesDone,
      bytesTotal: record.bytesTotal,
      walFilesDone: record.walFilesDone,
      walFilesTotal: record.walFilesTotal,
      etaSeconds: record.etaSeconds,
    };
  }

  /** Moves to a phase (never back) and writes it, with the numbers so far. */
  phase(phase: RestorePhase): Promise<void> {
    if (RESTORE_PHASES.indexOf(phase) > RESTORE_PHASES.indexOf(this.fields.phase))
      this.fields = { ...this.fields, phase };
    // A new phase has no rate measured yet; the last one is over.
    this.fields = { ...this.fields, etaSeconds: phase === 'done' ? 0 : null };
    return this.flush();
  }

  /** What the plan says there is to do: the base backup's bytes, the WAL segments. */
  totals(bytesTotal: number, walFilesTotal: number): Promise<void> {
    this.grow({ bytesTotal, walFilesTotal });
    return this.flush();
  }

  /** Replay ended: every planned segment is through (replayed, or past the target). */
  replayed(walFilesApplied: number): Promise<void> {
    const all = Math.max(this.fields.walFilesTotal, walFilesApplied);
    this.grow({ walFilesDone: all, walFilesTotal: all });
    return this.flush();
  }

  /** What the driver is told: its steps as phases, its numbers written now and then. */
  build(): Required<RestoreBuildProgress> {
    return {
      step: (step) => {
        if (step === 'download') this.downloading = { since: this.now(), from: 0 };
        if (step === 'recover')
          this.replaying = { since: this.now(), from: this.fields.walFilesDone };
        void this.phase(PHASE_OF_STEP[step]);
      },
      // Written now and then, and with the next phase: the last numbers are not lost.
      downloaded: (bytes) => {
        this.grow({ bytesDone: bytes });
        this.estimate(this.downloading, bytes, this.fields.bytesTotal);
        this.flushNowAndThen();
      },
      replayed: (segments) => {
        // The plan's count is what is shown as done: never more than it, until replay ends.
        const done = Math.min(segments, this.fields.walFilesTotal);
        this.grow({ walFilesDone: done });
        this.estimate(this.replaying, done, this.fields.walFilesTotal);
        this.flushNowAndThen();
      },
    };
  }

  /**
   * Writes the fields as they are now, after the writes asked for before; waits for it.
   * A failed write is told to `failed` and does not fail the restore: what it shows is
   * written again with the next.
   */
  flush(): Promise<void> {
    const fields = { ...this.fields };
    this.written = this.now();
    this.writing = this.writing.then(() => this.write(fields)).then(() => undefined, this.failed);
    return this.writing;
  }

  private flushNowAndThen(): void {
    if (this.now() - this.written >= this.writeEveryMs) void this.flush();
  }

  /** The seconds left of a phase at the rate measured since it began in this attempt. */
  private estimate(measured: Measured | undefined, done: number, total: number): void {
    if (!measured) return;
    const elapsedMs = this.now() - measured.since;
    const rate = (done - measured.from) / elapsedMs;
    // Measured over half a write's interval at least before an estimate is made of it.
    if (elapsedMs < this.writeEveryMs / 2 || !(rate > 0) || total <= 0) return;
    const etaSeconds = Math.ceil(Math.max(0, total - done) / rate / 1000);
    this.fields = { ...this.fields, etaSeconds };
  }

  private grow(numbers: Partial<Omit<ProgressFields, 'phase' | 'etaSeconds'>>): void {
    const fields = { ...this.fields };
    for (const [key, value] of Object.entries(numbers) as [keyof typeof numbers, number][])
      fields[key] = Math.max(fields[key], value);
    this.fields = fields;
  }
}
