import { resolveOsUser } from '@pgcloud/postgres';
import type { KubeConfig } from '@kubernetes/client-node';
import { BASE_ENV } from '@pgcloud/postgres';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CnpgOperatorStandIn } from './cnpg-operator-stand-in.js';
import { KubeletStandIn } from './kubelet-stand-in.js';
import { ApiServerStandIn } from './api-server-stand-in.js';

/** Where the stand-in's servers keep their data, and PostgreSQL's binaries. */
export interface KubernetesStandInOptions {
  dataRoot: string;
  binDir: string;
  /** The OS user the servers run as (default `postgres`). */
  osUser?: string;
  /** Namespaces to make at start. */
  namespaces?: string[];
  /**
   * The directory standing in for the image's working directory, where Jobs' commands run
   * (default: the current directory). The repository root stands in for pgcloud's image.
   */
  imageRoot?: string;
}

/**
 * A STAND-IN Kubernetes for tests: the in-memory API server (ApiServerStandIn), which
 * checks every object written against its schema (@pgcloud/kubernetes/validate: the
 * vendored CNPG schema for Clusters), and the CNPG operator stand-in (CnpgOperatorStandIn) that
 * runs real local PostgreSQL servers for its Clusters, with kube-proxy's and a load
 * balancer's stand-ins, and the Job controller's and kubelet's stand-in (KubeletStandIn), which
 * runs Jobs' containers as local processes in `imageRoot`, as our own user (root when we
 * are root: pgcloud's programs then drop to PG_OS_USER for PostgreSQL themselves), with
 * the image's environment: PATH (node's directory first), PG_BIN_DIR and PG_OS_USER. There
 * is no Kubernetes on the test machines; this is what the kubernetes driver is run against.
 */
export class KubernetesStandIn {
  private constructor(
    readonly api: ApiServerStandIn,
    readonly operator: CnpgOperatorStandIn,
    readonly jobs: KubeletStandIn,
    private readonly dataRoot: string,
  ) {}

  static async start(options: KubernetesStandInOptions): Promise<KubernetesStandIn> {
    // Loaded here: ajv and the schemas would slow every importer of @pgcloud/kube-stand-in.
    const { validateObject } = await import('@pgcloud/kubernetes/validate');
    const api = await ApiServerStandIn.start({ validate: validateObject });
    const osUser = await resolveOsUser(options.osUser ?? 'postgres');
    const jobs = KubeletStandIn.start({
      apiUrl: api.url,
      token: api.token,
      // `_` keeps it apart from the servers' `<dataRoot>/<namespace>` directories.
      podRoot: join(options.dataRoot, '_pods'),
      imageRoot: options.imageRoot ?? process.cwd(),
      imageEnv: {
        ...BASE_ENV,
        PATH: `${dirname(process.execPath)}:${BASE_ENV.PATH}`,
        PG_BIN_DIR: options.binDir,
        PG_OS_USER: osUser.name,
      },
    });
    const operator = CnpgOperatorStandIn.start({
      apiUrl: api.url,
      token: api.token,
      dataRoot: options.dataRoot,
      binDir: options.binDir,
      osUser,
      otherPods: () => jobs.endpoints(),
    });
    const standIn = new KubernetesStandIn(api, operator, jobs, options.dataRoot);
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

  /**
   * Stops the Job runner and its processes, the operator, its servers and proxies, and the
   * API; removes the servers' and pods' files.
   */
  async stop(): Promise<void> {
    await this.jobs.stop();
    await this.operator.stop();
    await this.api.stop();
    await rm(this.dataRoot, { recursive: true, force: true });
  }
}
