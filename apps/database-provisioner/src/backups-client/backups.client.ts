import type { OnApplicationShutdown } from '@nestjs/common';
import type { DatabaseIdRef, RequestContext, RestorePlan } from '@pgcloud/contracts';
import { BACKUP_PATTERNS, BACKUP_RESTORE_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';

/**
 * What the provisioner asks backup-service: to remove the backups of a removed database,
 * and how to fetch a backup it restores.
 */
export class BackupsClient implements OnApplicationShutdown {
  constructor(private readonly client: ServiceClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /** Deletes every backup of the database, objects first; safe to ask again. */
  deleteForDatabase(ctx: RequestContext, databaseId: string): Promise<{ deleted: number }> {
    return this.client.send<{ deleted: number }, DatabaseIdRef>(
      BACKUP_PATTERNS.deleteForDatabase,
      ctx,
      { database_id: databaseId },
    );
  }

  /** A fresh link to a completed backup and its checksum, for one restore attempt. */
  restorePlan(ctx: RequestContext, backupId: string): Promise<RestorePlan> {
    return this.client.send<RestorePlan, { backup_id: string }>(BACKUP_RESTORE_PATTERNS.plan, ctx, {
      backup_id: backupId,
    });
  }
}
