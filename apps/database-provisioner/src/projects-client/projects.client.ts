import type { OnApplicationShutdown } from '@nestjs/common';
import type { Project, ProjectIdRequest, Region, RequestContext } from '@pgcloud/contracts';
import { PROJECT_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';

/** What the provisioner asks project-service: whether a project is the caller's, and regions. */
export class ProjectsClient implements OnApplicationShutdown {
  constructor(private readonly client: ServiceClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /** The caller's project, or PROJECT_NOT_FOUND (from project-service) when it is not theirs. */
  check(ctx: RequestContext, id: string): Promise<Project> {
    return this.client.send<Project, ProjectIdRequest>(PROJECT_PATTERNS.check, ctx, { id });
  }

  async regions(ctx: RequestContext): Promise<Region[]> {
    const { regions } = await this.client.send<{ regions: Region[] }>(
      PROJECT_PATTERNS.regions,
      ctx,
      {},
    );
    return regions;
  }
}
