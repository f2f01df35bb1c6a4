import type { KubeConfig } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node';
import type { ReadinessCheck, ReadinessSource } from '@pgcloud/observability';
import { KubeObjects } from '../kubernetes/kube-objects.js';

/**
 * The kubernetes driver can work (/readyz's `driver`): the Kubernetes API answers the
 * provisioner's ServiceAccount, and every region's namespace is there. One GET per
 * namespace, each a read the driver's RBAC grants.
 */
export class KubernetesDriverReadiness implements ReadinessSource {
  private readonly objects: KubeObjects;
  private readonly namespaces: string[];

  constructor(kubeConfig: KubeConfig, namespaces: Record<string, string>) {
    this.objects = new KubeObjects(kubeConfig);
    this.namespaces = [...new Set(Object.values(namespaces))];
  }

  readinessChecks(): ReadinessCheck[] {
    return [{ name: 'driver', check: () => this.check() }];
  }

  private async check(): Promise<void> {
    for (const name of this.namespaces) {
      const found = await this.objects
        .get({ apiVersion: 'v1', kind: 'Namespace', namespace: '', name })
        .catch((err: unknown) => {
          throw new Error(`the Kubernetes API did not answer: ${describe(err)}`);
        });
      if (!found) throw new Error(`namespace ${name} (KUBERNETES_NAMESPACES) does not exist`);
    }
  }
}

/** An API error's status and the Status message it carried, or another error's message. */
function describe(err: unknown): string {
  if (!(err instanceof ApiException)) return err instanceof Error ? err.message : String(err);
  const body: unknown = typeof err.body === 'string' ? parseJson(err.body) : err.body;
  const message = (body as { message?: unknown } | undefined)?.message;
  return `HTTP ${err.code}${typeof message === 'string' ? `: ${message}` : ''}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
