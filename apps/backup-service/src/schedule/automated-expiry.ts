import { Injectable } from '@nestjs/common';
import type { RequestContext } from '@pgcloud/contracts';
import { AUTH_PATTERNS } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { BackupServiceConfig } from '../config.js';
import { expiryOf } from './backup-schedule.js';

/**
 * When automated backups expire, by their owners' tiers (docs/api/backups.md): the
 * schedule's and PITR's base backups alike.
 */
@Injectable()
export class AutomatedExpiry {
  constructor(
    private readonly rpc: RpcClient,
    private readonly config: BackupServiceConfig,
  ) {}

  /** Asks auth-service the owners' tiers once; answers, per owner, when a backup taken at `nowMs` expires. */
  async forOwners(
    ctx: RequestContext,
    ownerIds: string[],
    nowMs: number,
  ): Promise<(ownerId: string) => Date> {
    const tiers = (
      await this.rpc.call(AUTH_PATTERNS.tiers, ctx, { user_ids: [...new Set(ownerIds)] })
    ).tiers;
    const retention = {
      free: this.config.BACKUP_RETENTION_FREE_SECONDS,
      pro: this.config.BACKUP_RETENTION_PRO_SECONDS,
    };
    return (ownerId) => expiryOf(tiers[ownerId], nowMs, retention);
  }
}
