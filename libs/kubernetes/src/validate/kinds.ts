import {
  apps,
  autoscaling,
  batch,
  networkingK8sIo,
  policy,
  rbacAuthorizationK8sIo,
  v1,
} from 'kubernetes-models';
import { clusterProblems } from './cluster.validator.js';
import { prometheusRuleProblems } from './prometheus-rule.validator.js';
import type { ModelClass } from './unknown-fields.js';
import { modelProblems } from './unknown-fields.js';

/** Problems of an object of one kind, without the `Kind/name: ` prefix. */
export type KindValidator = (object: { kind: string }) => string[];

const model =
  (modelClass: ModelClass): KindValidator =>
  (object) =>
    modelProblems(object, modelClass);

/**
 * The kinds pgcloud writes (the deploy manifests, the kubernetes driver and its restore
 * Jobs, the alerting rules), by `apiVersion/kind`: built-in kinds against their
 * kubernetes-models class, CNPG's Cluster and the operator's PrometheusRule against schemas
 * written here. Any other kind (a typo in apiVersion, an
 * unvendored CRD) is refused.
 */
export const KINDS: Readonly<Record<string, KindValidator>> = {
  'v1/Namespace': model(v1.Namespace),
  'v1/ServiceAccount': model(v1.ServiceAccount),
  'v1/Service': model(v1.Service),
  'v1/ConfigMap': model(v1.ConfigMap),
  'v1/Secret': model(v1.Secret),
  'v1/Pod': model(v1.Pod),
  'apps/v1/Deployment': model(apps.v1.Deployment),
  'apps/v1/StatefulSet': model(apps.v1.StatefulSet),
  'batch/v1/Job': model(batch.v1.Job),
  'networking.k8s.io/v1/NetworkPolicy': model(networkingK8sIo.v1.NetworkPolicy),
  'networking.k8s.io/v1/Ingress': model(networkingK8sIo.v1.Ingress),
  'policy/v1/PodDisruptionBudget': model(policy.v1.PodDisruptionBudget),
  'autoscaling/v2/HorizontalPodAutoscaler': model(autoscaling.v2.HorizontalPodAutoscaler),
  'rbac.authorization.k8s.io/v1/Role': model(rbacAuthorizationK8sIo.v1.Role),
  'rbac.authorization.k8s.io/v1/RoleBinding': model(rbacAuthorizationK8sIo.v1.RoleBinding),
  'rbac.authorization.k8s.io/v1/ClusterRole': model(rbacAuthorizationK8sIo.v1.ClusterRole),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': model(
    rbacAuthorizationK8sIo.v1.ClusterRoleBinding,
  ),
  'postgresql.cnpg.io/v1/Cluster': clusterProblems,
  'monitoring.coreos.com/v1/PrometheusRule': prometheusRuleProblems,
};
