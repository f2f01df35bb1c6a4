import { resolveOsUser } from '@pgcloud/postgres';
import type { KubeConfig } from '@kubernetes/client-node';
import { rm } from 'node:fs/promises';
import { CnpgStandIn } from './cnpg-stand-in.js';
import { KubernetesTestApi } from './kubernetes-test-api.js';

/** Where the stand-in's servers keep their data, and PostgreSQL's binaries. */
export interface KubernetesStandInOptions {
  dataRoot: string;
  binDir: string;
  /** The OS user the servers run as (default `postgres`). */
  osUser?: string;
  /** Namespaces to make at start. */
  namespaces?: string[];
}

/**
 * A STAND-IN Kubernetes for tests: the in-memory API server (KubernetesTestApi), which
 * checks every object written against its schema (@pgcloud/kubernetes/validate: the
 * vendored CNPG schema for Clusters), and the CNPG operator stand-in (CnpgStandIn) that
 * runs real local PostgreSQL servers for its Clusters, with kube-proxy's and a load
 * balancer's stand-ins. There is no Kubernetes on the test machines; this is what the
 * kubernetes driver is run against.
 */
export class KubernetesStandIn {
  private constructor(
    readonly api: KubernetesTestApi,
    readonly operator: CnpgStandIn,
    private readonly dataRoot: string,
  ) {}

  static async start(options: KubernetesStandInOptions): Promise<KubernetesStandIn> {
    // Loaded here: ajv and the schemas would slow every importer of @pgcloud/testing.
    const { validateObject } = await import('@pgcloud/kubernetes/validate');
    const api = await KubernetesTestApi.start({ validate: validateObject });
    const operator = CnpgStandIn.start({
      apiUrl: api.url,
      token: api.token,
      dataRoot: options.dataRoot,
      binDir: options.binDir,
      osUser: await resolveOsUser(options.osUser ?? 'postgres'),
    });
    const standIn = new KubernetesStandIn(api, operator, options.dataRoot);
    try {
      for (const namespace of options.namespaces ?? []) await standIn.createNamespace(namespace);
    } catch (err) {
      await standIn.stop();
      throw err;
    }
    return standIn;
  }

  /** A client-node KubeConfig that reaches the API. */
  kubeConfig(): Promise<KubeConfig> {
    return this.api.kubeConfig();
  }

  async createNamespace(name: string): Promise<void> {
    const response = await fetch(`${this.api.url}/api/v1/namespaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.api.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    });
    if (!response.ok && response.status !== 409)
      throw new Error(`namespace ${name}: ${response.status} ${await response.text()}`);
  }

  /** Stops the operator, its servers and proxies, and the API; removes the servers' data. */
  async stop(): Promise<void> {
    await this.operator.stop();
    await this.api.stop();
    await rm(this.dataRoot, { recursive: true, force: true });
  }
}
