import type { OnApplicationShutdown } from '@nestjs/common';
import type { RequestContext, Tier, UserTiersRequest } from '@pgcloud/contracts';
import { AUTH_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';

/** What backup-service asks auth-service: the owners' tiers, for automated backups' expiry. */
export class AuthClient implements OnApplicationShutdown {
  constructor(private readonly client: ServiceClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  async tiers(ctx: RequestContext, userIds: string[]): Promise<Record<string, Tier>> {
    if (userIds.length === 0) return {};
    const { tiers } = await this.client.send<{ tiers: Record<string, Tier> }, UserTiersRequest>(
      AUTH_PATTERNS.tiers,
      ctx,
      { user_ids: userIds },
    );
    return tiers;
  }
}
