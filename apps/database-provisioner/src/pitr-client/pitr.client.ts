import type { OnApplicationShutdown } from '@nestjs/common';
import type {
  DatabaseIdRef,
  PitrPlanRequest,
  RequestContext,
  RestorePlan,
} from '@pgcloud/contracts';
import { PITR_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';

/**
 * What the provisioner asks pitr-worker: to remove a removed database's WAL archive, the
 * plan of a PITR restore, and to stop and start the receiver around an in-place restore.
 */
export class PitrClient implements OnApplicationShutdown {
  constructor(private readonly client: ServiceClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /** Stops the receiver and deletes the WAL objects; OPERATION_IN_PROGRESS while it stops. */
  deleteForDatabase(ctx: RequestContext, databaseId: string): Promise<{ deleted: number }> {
    return this.client.send<{ deleted: number }, DatabaseIdRef>(
      PITR_PATTERNS.deleteForDatabase,
      ctx,
      { database_id: databaseId },
    );
  }

  /** Fresh links to the base backup and WAL a PITR restore replays, and its target. */
  restorePlan(ctx: RequestContext, request: PitrPlanRequest): Promise<RestorePlan> {
    return this.client.send<RestorePlan, PitrPlanRequest>(PITR_PATTERNS.restorePlan, ctx, request);
  }

  async pauseForRestore(ctx: RequestContext, databaseId: string): Promise<void> {
    await this.client.send(PITR_PATTERNS.pauseForRestore, ctx, { database_id: databaseId });
  }

  async resumeAfterRestore(ctx: RequestContext, databaseId: string): Promise<void> {
    await this.client.send(PITR_PATTERNS.resumeAfterRestore, ctx, { database_id: databaseId });
  }
}
