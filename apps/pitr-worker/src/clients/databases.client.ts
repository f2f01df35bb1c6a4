import type { OnApplicationShutdown } from '@nestjs/common';
import type {
  BackupSource,
  CreateRestoreRequest,
  CreatedRestore,
  Database,
  DatabaseIdRef,
  DatabaseRef,
  RequestContext,
} from '@pgcloud/contracts';
import { DATABASE_PATTERNS, RESTORE_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';

/** What pitr-worker asks the database-provisioner. */
export class DatabasesClient implements OnApplicationShutdown {
  constructor(private readonly client: ServiceClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /** The caller's database, or PROJECT_NOT_FOUND / DATABASE_NOT_FOUND from the provisioner. */
  get(ctx: RequestContext, ref: DatabaseRef): Promise<Database> {
    return this.client.send<Database, DatabaseRef>(DATABASE_PATTERNS.get, ctx, ref);
  }

  /** How to reach the database's server as the replication role (DATABASE_NOT_READY unless running). */
  replicationSource(ctx: RequestContext, databaseId: string): Promise<BackupSource> {
    return this.client.send<BackupSource, DatabaseIdRef>(DATABASE_PATTERNS.backupSource, ctx, {
      database_id: databaseId,
    });
  }

  /** Asks the provisioner, which runs every restore, to restore to a point in time. */
  restore(ctx: RequestContext, request: CreateRestoreRequest): Promise<CreatedRestore> {
    return this.client.send<CreatedRestore, CreateRestoreRequest>(
      RESTORE_PATTERNS.create,
      ctx,
      request,
    );
  }
}
