import { REPLICATION_ROLE } from '../database-driver.js';
import type { ClusterObject } from './cluster-object.js';
import { isHealthy } from './cluster-object.js';
import type { KubeObjects } from './kube-objects.js';
import type { ServerNames } from './server-names.js';
import type { Waiting } from './server-objects.js';
import { clusterRef } from './server-objects.js';
import type { SuperuserLogin } from './superuser-session.js';
import { withTlsSuperuser } from './superuser-session.js';
import { waitUntil } from './wait-until.js';

export const SQL_TIMEOUT_MS = 5000;

/** Until CNPG calls the Cluster healthy and the superuser logs in through the Service. */
export async function waitForCluster(
  objects: KubeObjects,
  names: ServerNames,
  cluster: string,
  login: SuperuserLogin,
  waiting: Waiting & { signal?: AbortSignal },
): Promise<void> {
  await waitUntil(
    async () => {
      const found = await objects.get<ClusterObject>(clusterRef(names, cluster));
      if (!found) throw new Error('it is gone');
      if (!isHealthy(found)) throw new Error(`phase: ${found.status?.phase ?? 'none yet'}`);
      return withTlsSuperuser(login, SQL_TIMEOUT_MS, async (client) => {
        await client.query('SELECT 1');
        return true;
      });
    },
    { ...waiting, what: `Cluster ${names.namespace}/${cluster} ready` },
  );
}

/**
 * The application sees only its own database; the replication role reaches `postgres`,
 * where pitr-worker keeps its slot. Waits for CNPG to have made the managed roles.
 */
export async function grantAccess(
  names: ServerNames,
  login: SuperuserLogin,
  waiting: Waiting & { signal?: AbortSignal },
): Promise<void> {
  await waitUntil(
    () =>
      withTlsSuperuser(login, SQL_TIMEOUT_MS, async (client) => {
        const { rowCount } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [
          REPLICATION_ROLE,
        ]);
        if (rowCount === 0) return undefined;
        await client.query('REVOKE CONNECT ON DATABASE postgres FROM PUBLIC');
        await client.query('REVOKE CONNECT ON DATABASE template1 FROM PUBLIC');
        await client.query(`GRANT CONNECT ON DATABASE postgres TO ${REPLICATION_ROLE}`);
        return true;
      }),
    { ...waiting, what: `the roles of ${names.base}` },
  );
}
