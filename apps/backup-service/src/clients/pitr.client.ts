import type { OnApplicationShutdown } from '@nestjs/common';
import type { BackupsInUse, RequestContext } from '@pgcloud/contracts';
import { PITR_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';

/** What backup-service asks pitr-worker: which expired backups PITR's windows still need. */
export class PitrClient implements OnApplicationShutdown {
  constructor(private readonly client: ServiceClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /** Per database with PITR, the time from which its backups stay (BackupsInUse.keep_from). */
  async backupsInUse(ctx: RequestContext, databaseIds: string[]): Promise<Record<string, string>> {
    if (databaseIds.length === 0) return {};
    const { keep_from } = await this.client.send<BackupsInUse, { database_ids: string[] }>(
      PITR_PATTERNS.backupsInUse,
      ctx,
      { database_ids: databaseIds },
    );
    return keep_from;
  }
}
