import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';

/** The time and the waits of pitr-worker's loops, in a class a unit spec replaces. */
@Injectable()
export class Clock {
  now(): number {
    return Date.now();
  }

  /** Waits `ms`, or less when `signal` aborts; never throws. */
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    await sleep(ms, undefined, signal ? { signal } : {}).catch(() => undefined);
  }
}
