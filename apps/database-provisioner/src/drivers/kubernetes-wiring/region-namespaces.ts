import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PROJECT_PATTERNS } from '@pgcloud/contracts';
import type { ReadinessCheck, ReadinessSource } from '@pgcloud/observability';
import { RpcClient } from '@pgcloud/messaging';
import { ProvisionerConfig } from '../../config.js';

/** How long to wait before asking project-service for its regions again. */
export const REGIONS_RETRY_MS = 5000;

/**
 * Every region of the deployment has a namespace in KUBERNETES_NAMESPACES. The regions are
 * project-service's (REGIONS), so they are asked for at start, and again every few seconds
 * until project-service answers (the provisioner does not wait for it to start). A region
 * without a namespace is logged as an error and keeps /readyz's `region-namespaces`
 * failing: a database made there could not get a server. A new region means a new
 * ConfigMap, which restarts the provisioner and so checks again.
 */
@Injectable()
export class RegionNamespaces
  implements OnApplicationBootstrap, OnApplicationShutdown, ReadinessSource
{
  private readonly logger = new Logger(RegionNamespaces.name);
  /** The regions without a namespace; undefined until project-service has answered. */
  private missing: string[] | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private checking: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly rpc: RpcClient,
    private readonly config: ProvisionerConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.checking = this.check();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.checking;
  }

  /** The regions without a namespace, once project-service has answered (none if stopped first). */
  async regionsWithoutNamespace(): Promise<string[]> {
    while (this.missing === undefined && !this.stopped) await this.checking;
    return this.missing ?? [];
  }

  readinessChecks(): ReadinessCheck[] {
    return [
      {
        name: 'region-namespaces',
        check: () => {
          if (this.missing?.length) throw new Error(this.problem(this.missing));
        },
      },
    ];
  }

  private async check(): Promise<void> {
    try {
      const ctx = { requestId: `region-namespaces-${Date.now()}` };
      const { regions } = await this.rpc.call(PROJECT_PATTERNS.regions, ctx, {});
      const namespaces = this.config.kubernetesNamespaces;
      this.missing = regions.map((region) => region.id).filter((id) => !namespaces[id]);
      if (this.missing.length > 0) this.logger.error(this.problem(this.missing));
    } catch (err) {
      if (this.stopped) return;
      this.logger.warn(
        `could not ask project-service for the regions (${(err as Error).message}); again in ${REGIONS_RETRY_MS / 1000} s`,
      );
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, REGIONS_RETRY_MS);
      });
      if (!this.stopped) await this.check();
    }
  }

  private problem(missing: string[]): string {
    return (
      `region ${missing.join(', ')} has no namespace in KUBERNETES_NAMESPACES ` +
      `(${this.config.KUBERNETES_NAMESPACES}): add region=namespace for each, or databases there fail`
    );
  }
}
