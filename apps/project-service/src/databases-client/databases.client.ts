import type { OnApplicationShutdown } from '@nestjs/common';
import type { ProjectRef, RequestContext } from '@pgcloud/contracts';
import { DATABASE_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';

/** What project-service asks database-provisioner about a project's databases. */
export class DatabasesClient implements OnApplicationShutdown {
  constructor(private readonly client: ServiceClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  async count(ctx: RequestContext, projectId: string): Promise<number> {
    const { count } = await this.client.send<{ count: number }, ProjectRef>(
      DATABASE_PATTERNS.countForProject,
      ctx,
      { project_id: projectId },
    );
    return count;
  }

  /** Takes every database of the project out of the API; their servers go in the background. */
  async deleteAll(ctx: RequestContext, projectId: string): Promise<void> {
    await this.client.send<{ deleted: number }, ProjectRef>(
      DATABASE_PATTERNS.deleteForProject,
      ctx,
      {
        project_id: projectId,
      },
    );
  }
}
