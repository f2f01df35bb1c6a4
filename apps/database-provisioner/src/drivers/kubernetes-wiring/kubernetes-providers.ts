import type { Provider } from '@nestjs/common';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ProvisionerConfig } from '../../config.js';
import { DatabaseDriver } from '../database-driver.js';
import { RegionNamespaces } from './region-namespaces.js';

/** The KubeConfig the driver and its readiness check share. */
export const KUBE_CONFIG = Symbol('KubeConfig');

/** The kubernetes driver's readiness check (/readyz's `driver`). */
export const KUBERNETES_DRIVER_READINESS = Symbol('KubernetesDriverReadiness');

/**
 * The kubernetes driver and what goes with it: the connection from KubeConfig's defaults
 * (KUBECONFIG, else ~/.kube/config, else the pod's ServiceAccount), the readiness check,
 * and the check that every region has a namespace. @kubernetes/client-node and the driver
 * are imported only when this driver is selected: loading them takes about a second.
 */
export function kubernetesProviders(config: ProvisionerConfig): Provider[] {
  return [
    {
      provide: KUBE_CONFIG,
      useFactory: async (): Promise<KubeConfig> => {
        const { KubeConfig } = await import('@kubernetes/client-node');
        const kubeConfig = new KubeConfig();
        kubeConfig.loadFromDefault();
        return kubeConfig;
      },
    },
    {
      provide: DatabaseDriver,
      inject: [KUBE_CONFIG],
      useFactory: async (kubeConfig: KubeConfig): Promise<DatabaseDriver> => {
        const { ClosingKubernetesDriver } = await import('./closing-kubernetes-driver.js');
        const { kubernetesDriverSettings } = await import('./kubernetes-driver-settings.js');
        return new ClosingKubernetesDriver(kubernetesDriverSettings(config, kubeConfig));
      },
    },
    {
      provide: KUBERNETES_DRIVER_READINESS,
      inject: [KUBE_CONFIG],
      useFactory: async (kubeConfig: KubeConfig) => {
        const { KubernetesDriverReadiness } = await import('./kubernetes-driver.readiness.js');
        return new KubernetesDriverReadiness(kubeConfig, config.kubernetesNamespaces);
      },
    },
    RegionNamespaces,
  ];
}
