import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PROJECT_PATTERNS } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { isReadinessSource } from '@pgcloud/observability';
import { ApiServerStandIn } from '@pgcloud/kube-stand-in';
import { answer, fakeRpcClient } from '@pgcloud/testing';
import { loadConfig, ProvisionerConfig } from '../../config.js';
import { DatabaseDriver } from '../database-driver.js';
import { driverProviders } from '../driver-providers.js';
import { LocalDriver } from '../local/local.driver.js';
import { ClosingKubernetesDriver } from './closing-kubernetes-driver.js';
import { KUBERNETES_DRIVER_READINESS } from './kubernetes-providers.js';
import { KubernetesDriverReadiness } from './kubernetes-driver.readiness.js';
import { RegionNamespaces } from './region-namespaces.js';

const DEPENDENT = 'a job runner';

@Module({})
class WiringModule {
  /** The driver's providers, and one that uses the driver and records when it stops. */
  static forRoot(config: ProvisionerConfig, stopped: string[]): DynamicModule {
    return {
      module: WiringModule,
      providers: [
        { provide: ProvisionerConfig, useValue: config },
        {
          provide: RpcClient,
          useValue: fakeRpcClient(
            answer(PROJECT_PATTERNS.regions, () => ({ regions: [{ id: 'eu-west', name: 'x' }] })),
          ),
        },
        ...driverProviders(config),
        {
          provide: DEPENDENT,
          inject: [DatabaseDriver],
          useFactory: () => ({
            async onApplicationShutdown() {
              await new Promise((resolve) => setTimeout(resolve, 50));
              stopped.push(DEPENDENT);
            },
          }),
        },
      ],
    };
  }
}

describe('the driver DATABASE_DRIVER selects, as the app wires it', () => {
  let api: ApiServerStandIn;
  let kubeconfig: string | undefined;
  before(async () => {
    api = await ApiServerStandIn.start();
    kubeconfig = process.env.KUBECONFIG;
    // KubeConfig.loadFromDefault() reads it, as in a deployment outside the cluster.
    process.env.KUBECONFIG = api.kubeconfigPath;
  });
  after(async () => {
    if (kubeconfig === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = kubeconfig;
    await api.stop();
  });

  it('kubernetes: the driver, its readiness and the region check; closed after its users', async () => {
    const config = loadConfig(
      {
        DATABASE_DRIVER: 'kubernetes',
        KUBERNETES_NAMESPACES: 'eu-west=default',
        PGCLOUD_IMAGE: 'pgcloud',
        S3_ENDPOINT: 'http://127.0.0.1:7480',
      },
      () => 'default',
    );
    const stopped: string[] = [];
    const app = await NestFactory.createApplicationContext(WiringModule.forRoot(config, stopped), {
      logger: false,
    });
    const driver = app.get(DatabaseDriver);
    assert.ok(driver instanceof ClosingKubernetesDriver);
    const readiness: unknown = app.get(KUBERNETES_DRIVER_READINESS);
    assert.ok(readiness instanceof KubernetesDriverReadiness && isReadinessSource(readiness));
    await readiness.readinessChecks()[0]?.check(new AbortController().signal);
    assert.ok(app.get(RegionNamespaces) instanceof RegionNamespaces);
    const close = driver.close.bind(driver);
    driver.close = async () => {
      stopped.push('driver');
      await close();
    };
    await app.close();
    assert.deepEqual(stopped, [DEPENDENT, 'driver']);
  });

  it('local: the local driver and its readiness, nothing of Kubernetes', async () => {
    const config = loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:7480' }, () => undefined);
    const app = await NestFactory.createApplicationContext(WiringModule.forRoot(config, []), {
      logger: false,
    });
    assert.ok(app.get(DatabaseDriver) instanceof LocalDriver);
    assert.throws(() => app.get(KUBERNETES_DRIVER_READINESS));
    assert.throws(() => app.get(RegionNamespaces));
    await app.close();
  });
});
