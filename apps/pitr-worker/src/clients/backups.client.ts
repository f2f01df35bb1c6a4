import type { OnApplicationShutdown } from '@nestjs/common';
import type {
  ArchiveBackup,
  DatabaseIdRef,
  DatabaseRef,
  RequestContext,
  RestorePlan,
} from '@pgcloud/contracts';
import { BACKUP_PATTERNS, BACKUP_RESTORE_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';

/** What pitr-worker asks backup-service: base backups for the archive, and what they hold. */
export class BackupsClient implements OnApplicationShutdown {
  constructor(private readonly client: ServiceClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /** Queues an automated base backup of the caller's database; answers its id. */
  async takeBase(ctx: RequestContext, ref: DatabaseRef): Promise<string> {
    const { backup_id } = await this.client.send<{ backup_id: string }, DatabaseRef>(
      BACKUP_PATTERNS.takeBase,
      ctx,
      ref,
    );
    return backup_id;
  }

  /** Every backup of the database, oldest first, with its WAL range. */
  async forArchive(ctx: RequestContext, databaseId: string): Promise<ArchiveBackup[]> {
    const { backups } = await this.client.send<{ backups: ArchiveBackup[] }, DatabaseIdRef>(
      BACKUP_PATTERNS.forArchive,
      ctx,
      { database_id: databaseId },
    );
    return backups;
  }

  /** A fresh link to a completed backup and its checksum, for one restore attempt. */
  restorePlan(ctx: RequestContext, backupId: string): Promise<RestorePlan> {
    return this.client.send<RestorePlan, { backup_id: string }>(BACKUP_RESTORE_PATTERNS.plan, ctx, {
      backup_id: backupId,
    });
  }
}
