import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Project } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import { KubernetesStandIn } from '@pgcloud/kube-stand-in';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, signIn, WORKSPACE_ROOT } from '@pgcloud/testing';
import { expectData } from './assertions.js';
import { ownStack } from './shared-stack.js';

/** Where the stand-in's Clusters, Jobs and Secrets of the databases live. */
export const DATABASES_NAMESPACE = 'pgcloud-databases';

/** A stack on the kubernetes driver, its stand-ins, and a Pro user with a project. */
export interface KubernetesStack {
  standIn: KubernetesStandIn;
  stack: Stack;
  owner: SignedIn;
  project: Project;
  stop(): Promise<void>;
}

/**
 * The whole stack with DATABASE_DRIVER=kubernetes against STAND-INS for Kubernetes and
 * CloudNativePG (libs/kube-stand-in: an API server of the test's, and an operator that
 * runs a real local PostgreSQL server per Cluster and each Job's containers as local
 * processes), with a Pro user signed in and a project of theirs.
 */
export async function startKubernetesStack(login: string): Promise<KubernetesStack> {
  const binDir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  const dataRoot = join(tmpdir(), 'pgcloud-test-k8s', randomBytes(4).toString('hex'));
  await mkdir(dataRoot, { recursive: true });
  const standIn = await KubernetesStandIn.start({
    dataRoot,
    binDir,
    osUser: process.env.PG_OS_USER ?? 'postgres',
    namespaces: ['pgcloud', DATABASES_NAMESPACE],
    imageRoot: WORKSPACE_ROOT,
  });
  const kubeconfig = join(dataRoot, 'kubeconfig.json');
  await writeFile(kubeconfig, (await standIn.kubeConfig()).exportConfig(), { mode: 0o600 });
  const stack = await ownStack({
    DATABASE_DRIVER: 'kubernetes',
    KUBECONFIG: kubeconfig,
    KUBERNETES_NAMESPACES: `local=${DATABASES_NAMESPACE}`,
    KUBERNETES_CA_NAMESPACE: 'pgcloud',
    KUBERNETES_SERVICE_TYPE: 'LoadBalancer',
    PGCLOUD_IMAGE: 'pgcloud:stand-in',
  });
  await signIn(new ApiClient(stack.baseUrl), login);
  await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
  const owner = await signIn(new ApiClient(stack.baseUrl), login);
  const project = expectData<Project>(await owner.api.post('/projects', { name: 'on-k8s' }), 201);
  return {
    standIn,
    stack,
    owner,
    project,
    stop: async () => {
      await stack.stop();
      await standIn.stop();
      await rm(dataRoot, { recursive: true, force: true });
    },
  };
}
