import type { V1Secret } from '@kubernetes/client-node';
import { DEPLOYMENT_CA_SECRET as CA_SECRET } from '@pgcloud/kubernetes';
import type { CertificateAuthority, OsUser } from '@pgcloud/postgres';
import {
  ensureCertificateAuthority,
  issueClientCertificate,
  issueServerCertificate,
} from '@pgcloud/postgres';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { KubeObjects } from './kube-objects.js';
import { secretValue } from './secret-objects.js';
import { MANAGED_BY } from './server-names.js';

/** The CA, loaded: openssl signs with files, so its key sits in a private (0700) temp dir. */
export interface LoadedCa {
  ca: CertificateAuthority;
  dir: string;
}

/** The process's own account: the files the driver makes here are its own. */
function currentUser(): OsUser {
  const { username, uid, gid } = userInfo();
  return { name: username, uid, gid, switchUser: false };
}

/**
 * The deployment's CA from its Secret, made the first time. Two provisioners starting at
 * once both make one; only the first create wins, and both use the winner's.
 */
export async function loadDeploymentCa(objects: KubeObjects, namespace: string): Promise<LoadedCa> {
  const dir = await mkdtemp(join(tmpdir(), 'pgcloud-ca-'));
  const ref = { apiVersion: 'v1', kind: 'Secret', namespace, name: CA_SECRET };
  let found = await objects.get<V1Secret>(ref);
  if (!found) {
    const made = await ensureCertificateAuthority(join(dir, 'new'));
    const [crt, key] = await Promise.all([readFile(made.certPath), readFile(made.keyPath)]);
    found = await objects.createOrGet<V1Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: CA_SECRET, namespace, labels: { ...MANAGED_BY } },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': crt.toString('base64'), 'tls.key': key.toString('base64') },
    });
    await rm(join(dir, 'new'), { recursive: true, force: true });
  }
  const ca = { certPath: join(dir, 'ca.pem'), keyPath: join(dir, 'ca.key') };
  const pem = secretValue(found, 'tls.crt');
  await writeFile(ca.certPath, pem, { mode: 0o600 });
  await writeFile(ca.keyPath, secretValue(found, 'tls.key'), { mode: 0o600 });
  return { ca: { ...ca, pem }, dir };
}

/**
 * A server certificate for `hosts` (names or addresses, as subjectAltNames), signed by the
 * CA, as PEM. The common name is short (64 characters at most): a load balancer's host
 * name may be longer, and clients check the subjectAltNames anyway.
 */
export async function issueCertificate(
  loaded: LoadedCa,
  commonName: string,
  hosts: readonly string[],
): Promise<{ certPem: string; keyPem: string }> {
  const rest = hosts.filter((host) => host !== commonName);
  return issuedPem(loaded, (outDir) =>
    issueServerCertificate(loaded.ca, {
      commonName,
      dnsNames: rest.filter((host) => isIP(host) === 0),
      ipAddresses: rest.filter((host) => isIP(host) !== 0),
      outDir,
      osUser: currentUser(),
    }),
  );
}

/** A client certificate for the role `role`, signed by the CA, as PEM (the `cert` login). */
export function issueClientCertificateFor(
  loaded: LoadedCa,
  role: string,
): Promise<{ certPem: string; keyPem: string }> {
  return issuedPem(loaded, (outDir) =>
    issueClientCertificate(loaded.ca, { commonName: role, outDir, osUser: currentUser() }),
  );
}

/** What `issue` writes into a private folder of its own, read back as PEM; the folder goes. */
async function issuedPem(
  loaded: LoadedCa,
  issue: (outDir: string) => Promise<{ certPath: string; keyPath: string }>,
): Promise<{ certPem: string; keyPem: string }> {
  const outDir = await mkdtemp(join(loaded.dir, 'issue-'));
  try {
    const issued = await issue(outDir);
    const [certPem, keyPem] = await Promise.all([
      readFile(issued.certPath, 'utf8'),
      readFile(issued.keyPath, 'utf8'),
    ]);
    return { certPem, keyPem };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}
