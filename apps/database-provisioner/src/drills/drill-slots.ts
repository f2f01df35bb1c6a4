import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerLockOptions } from '../databases/server-lock.repository.js';

/** Takes an advisory lock by name, or answers undefined at once (ServerLockRepository.hold). */
export type TryLock = <T>(
  lockName: string,
  work: (signal: AbortSignal) => Promise<T>,
  options: ServerLockOptions,
) => Promise<T | undefined>;

// How often a drill waiting for a slot looks again.
const LOOK_EVERY_MS = 2000;

/**
 * The deployment's drill slots (DRILL_CONCURRENCY): each a session advisory lock on the
 * metadata database, so the limit holds across replicas. A drill runs holding one, and
 * only while no restore waits for a worker: drills come last, after every user's restore.
 */
export class DrillSlots {
  constructor(
    private readonly tryLock: TryLock,
    private readonly concurrency: number,
    /** True while a user's restore waits for a worker. */
    private readonly restoresWaiting: () => Promise<boolean>,
    private readonly lookEveryMs = LOOK_EVERY_MS,
  ) {}

  /**
   * Runs `work` once a slot is free, holding it meanwhile; `work`'s signal is aborted when
   * the slot's session is lost (or `signal` is).
   */
  async run<T>(signal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    for (;;) {
      signal.throwIfAborted();
      if (!(await this.restoresWaiting()))
        for (let slot = 0; slot < this.concurrency; slot++) {
          const held = await this.tryLock(
            `pgcloud-drill-slot-${slot}`,
            async (slotSignal) => ({ value: await work(slotSignal) }),
            { wait: false, signal },
          );
          if (held) return held.value;
        }
      await sleep(this.lookEveryMs, undefined, { signal });
    }
  }
}
