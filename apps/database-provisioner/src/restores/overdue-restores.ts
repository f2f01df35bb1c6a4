import { Injectable, Logger } from '@nestjs/common';
import type { OnModuleInit } from '@nestjs/common';
import { ESTIMATE_HISTORY, estimateSeconds, pastRestore } from './restore-estimate.js';
import { reportOverdueRestores } from './restore.metrics.js';
import { RestoresRepository } from './restores.repository.js';

/** A restore is overdue past this many times its estimate. */
const OVERDUE_FACTOR = 3;

/**
 * Counts, at each scrape of pgcloud_restores_overdue, the restores that have run over three
 * times as long as this deployment's recent restores say their work takes (the estimate of
 * a dry run, on the bytes and WAL segments their plan holds): stuck, or far slower than
 * usual (docs/operating.md#a-stuck-restore).
 */
@Injectable()
export class OverdueRestores implements OnModuleInit {
  private readonly logger = new Logger(OverdueRestores.name);

  constructor(private readonly restores: RestoresRepository) {}

  onModuleInit(): void {
    reportOverdueRestores(() =>
      this.count().catch((err: unknown) => {
        this.logger.warn(`cannot count overdue restores: ${String(err)}`);
        return 0;
      }),
    );
  }

  async count(now = Date.now()): Promise<number> {
    const unfinished = await this.restores.unfinished();
    if (unfinished.length === 0) return 0;
    const history = (await this.restores.estimateHistory(ESTIMATE_HISTORY)).map(pastRestore);
    return unfinished.filter((restore) => {
      const estimate = estimateSeconds(history, {
        kind: restore.kind,
        bytes: restore.bytesTotal,
        walFiles: restore.walFilesTotal,
      });
      return now - restore.startedAt.getTime() > OVERDUE_FACTOR * estimate * 1000;
    }).length;
  }
}
