import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

// Every replica ticks; the one that takes this lock sweeps, the others skip the round.
const SWEEP_LOCK = 'pitr.retention';

/** The retention sweep's lock: one replica sweeps at a time. */
@Injectable()
export class SweepLock {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` while this replica holds the lock: a transaction-scoped advisory lock, held
   * on its own connection until `work` ends. Another replica holding it: `work` is skipped.
   */
  async whileHeld(work: () => Promise<void>): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const [row] = await manager.query<{ locked: boolean }[]>(
        'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked',
        [SWEEP_LOCK],
      );
      if (!row?.locked) return;
      await work();
    });
  }
}
