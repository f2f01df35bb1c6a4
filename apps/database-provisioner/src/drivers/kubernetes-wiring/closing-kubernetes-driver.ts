import type { OnApplicationShutdown } from '@nestjs/common';
import { KubernetesDriver } from '../kubernetes/kubernetes.driver.js';

/**
 * The kubernetes driver as the app's DatabaseDriver, closed when the app stops. Nest runs
 * a provider's shutdown hook after those of the providers that depend on it, so the job
 * runners and the reconcile pass have stopped by then: no job still needs the CA's key
 * that close() removes.
 */
export class ClosingKubernetesDriver extends KubernetesDriver implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
