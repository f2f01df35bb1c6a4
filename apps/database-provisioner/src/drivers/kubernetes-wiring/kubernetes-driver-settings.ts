import type { KubeConfig } from '@kubernetes/client-node';
import type { ProvisionerConfig } from '../../config.js';
import type { KubernetesDriverSettings } from '../kubernetes/kubernetes.driver.js';

/** The kubernetes driver's settings from the app's (loadConfig has checked them). */
export function kubernetesDriverSettings(
  config: ProvisionerConfig,
  kubeConfig: KubeConfig,
): KubernetesDriverSettings {
  const caNamespace = config.KUBERNETES_CA_NAMESPACE;
  const jobImage = config.PGCLOUD_IMAGE;
  if (!caNamespace || !jobImage)
    throw new Error('KUBERNETES_CA_NAMESPACE and PGCLOUD_IMAGE are unset: use loadConfig');
  return {
    kubeConfig,
    namespaces: config.kubernetesNamespaces,
    caNamespace,
    serviceType: config.KUBERNETES_SERVICE_TYPE,
    imageName: config.KUBERNETES_POSTGRES_IMAGE,
    ...(config.KUBERNETES_STORAGE_CLASS ? { storageClass: config.KUBERNETES_STORAGE_CLASS } : {}),
    readyTimeoutMs: config.KUBERNETES_READY_TIMEOUT_SECONDS * 1000,
    jobImage,
    restoreTimeoutMs: config.KUBERNETES_RESTORE_TIMEOUT_SECONDS * 1000,
  };
}
