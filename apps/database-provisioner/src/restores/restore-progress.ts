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
// The bytes of a download are written this often at most (the spec asks for every 2 s).
const WRITE_EVERY_MS = 1000;

/**
 * A running restore's phase and numbers, written to its record as they move on: a phase
 * at once, the bytes of a download once a second at most, one write at a time and in
 * order. Neither goes back: a retried attempt shows its phase once it passes the one
 * shown, and its bytes once they pass those counted.
 */
export class RestoreTracker {
  private fields: ProgressFields;
  private written = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    record: RestoreEntity,
    private readonly write: (fields: ProgressFields) => Promise<unknown>,
    private readonly failed: (err: unknown) => void,
    private readonly now: () => number = Date.now,
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

  /** What the driver is told: its steps as phases, its bytes written now and then. */
  build(): RestoreBuildProgress {
    return {
      step: (step) => void this.phase(PHASE_OF_STEP[step]),
      // Written now and then, and with the next phase: the last bytes are not lost.
      downloaded: (bytes) => {
        this.grow({ bytesDone: bytes });
        if (this.now() - this.written >= WRITE_EVERY_MS) void this.flush();
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

  private grow(numbers: Partial<Omit<ProgressFields, 'phase' | 'etaSeconds'>>): void {
    const fields = { ...this.fields };
    for (const [key, value] of Object.entries(numbers) as [keyof typeof numbers, number][])
      fields[key] = Math.max(fields[key], value);
    this.fields = fields;
  }
}
