import { CNPG_REPLICATION_USER } from '@pgcloud/kubernetes';
import type { ServerSpec } from '../database-driver.js';
import type { LoadedCa } from './deployment-ca.js';
import { issueCertificate, issueClientCertificateFor } from './deployment-ca.js';
import type { KubeObjects } from './kube-objects.js';
import { caSecret, roleSecrets, tlsSecret } from './secret-objects.js';
import type { ServerNames } from './server-names.js';
import { secretRef } from './server-objects.js';
import { serviceHostNames } from './service-object.js';

/**
 * A new server's Secrets: its login roles', the CA's certificate, the server's certificate
 * for the names clients reach it by (`host`), and its replicas' client certificate. A
 * retried create keeps what an earlier attempt made: each is made once, but the CA's
 * certificate, written every time (a crash may have come between the Secrets).
 */
export async function ensureServerSecrets(
  objects: KubeObjects,
  names: ServerNames,
  spec: ServerSpec,
  loaded: LoadedCa,
  host: string,
): Promise<void> {
  for (const secret of roleSecrets(names, spec)) await objects.createOrGet(secret);
  await objects.createOrGet(caSecret(names, loaded.ca.pem));
  if (!(await objects.get(secretRef(names, names.tlsSecret)))) {
    const certificate = await issueCertificate(loaded, names.base, serviceHostNames(names, host));
    await objects.createOrGet(tlsSecret(names, certificate));
  }
  if (!(await objects.get(secretRef(names, names.replicationTlsSecret)))) {
    const certificate = await issueClientCertificateFor(loaded, CNPG_REPLICATION_USER);
    await objects.createOrGet(tlsSecret(names, certificate, names.replicationTlsSecret));
  }
}
