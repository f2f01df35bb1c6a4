import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Service } from '@kubernetes/client-node';
import { CNPG_CLUSTER_LABEL, kubeName } from '@pgcloud/kubernetes';
import { freePort, WORKSPACE_ROOT } from '@pgcloud/testing';
import { KubernetesStandIn } from '@pgcloud/kube-stand-in';
import { driverConformance } from '../conformance/driver-conformance.js';
import { KubernetesDriver } from './kubernetes.driver.js';

const NAMESPACE = 'pgcloud-databases';

// Against STAND-INS of Kubernetes and CNPG (libs/kube-stand-in): there is no
// cluster on the test machines. The servers behind them are real PostgreSQL servers.
driverConformance('kubernetes (on stand-ins for Kubernetes and CNPG)', async () => {
  const pgBinDir =
    process.env.PG_BIN_DIR ?? execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  const standIn = await KubernetesStandIn.start({
    dataRoot: join(tmpdir(), 'pgcloud-test-drivers', `k8s-${randomBytes(4).toString('hex')}`),
    binDir: pgBinDir,
    osUser: process.env.PG_OS_USER ?? 'postgres',
    namespaces: ['pgcloud', NAMESPACE],
    // The repository stands in for pgcloud's image, whose restore Job it runs.
    imageRoot: WORKSPACE_ROOT,
  });
  const driver = new KubernetesDriver({
    kubeConfig: await standIn.kubeConfig(),
    namespaces: { local: NAMESPACE },
    caNamespace: 'pgcloud',
    serviceType: 'LoadBalancer',
    imageName: 'ghcr.io/cloudnative-pg/postgresql:15',
    jobImage: 'pgcloud:stand-in',
    readyTimeoutMs: 60_000,
    pollMs: 100,
  });
  return {
    driver,
    region: 'local',
    port: () => freePort(),
    pgBinDir,
    async lose(serverId) {
      const [service] = standIn.api
        .objects('Service', NAMESPACE)
        .filter((object) => object.metadata.name === kubeName(serverId)) as unknown as V1Service[];
      const cluster = service?.spec?.selector?.[CNPG_CLUSTER_LABEL];
      if (!cluster) throw new Error(`no Service selects a Cluster of ${serverId}`);
      await standIn.operator.lose(NAMESPACE, cluster);
    },
    async stop() {
      await driver.close();
      await standIn.stop();
    },
  };
});
