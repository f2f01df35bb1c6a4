import { POSTGRES_CONTAINER_PORT, primarySelector, SERVICE_PORT_NAME } from '@pgcloud/kubernetes';
import type { ServerNames } from './server-names.js';

/** How clients reach the servers: inside the cluster only, or through a load balancer. */
export type ServiceType = 'ClusterIP' | 'LoadBalancer';

/**
 * pgcloud's Service for one database: its port (the record's) to PostgreSQL's 5432 on the
 * primary of the Cluster it selects. pgcloud owns it, not CNPG, so a restore swaps the
 * Cluster behind it without the address changing.
 */
export function buildService(
  names: ServerNames,
  input: { port: number; type: ServiceType; clusterName: string },
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: names.base, namespace: names.namespace, labels: names.labels },
    spec: {
      type: input.type,
      selector: primarySelector(input.clusterName),
      ports: [
        {
          name: SERVICE_PORT_NAME,
          port: input.port,
          targetPort: POSTGRES_CONTAINER_PORT,
          protocol: 'TCP',
        },
      ],
    },
  };
}

/**
 * The names a server's certificate is issued for: the Service's names inside the cluster
 * and, behind a load balancer, the address it was given.
 */
export function serviceHostNames(names: ServerNames, external?: string): string[] {
  const inside = [
    names.base,
    `${names.base}.${names.namespace}`,
    `${names.base}.${names.namespace}.svc`,
    `${names.base}.${names.namespace}.svc.cluster.local`,
  ];
  return external ? [external, ...inside] : inside;
}
