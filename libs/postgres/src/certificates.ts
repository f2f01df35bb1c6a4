import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { access, chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { OsUser } from './os-user.js';
import { chownFile, fsyncPath } from './os-user.js';

const execFileAsync = promisify(execFile);

/** The deployment's certificate authority: its key stays with us, its PEM goes to clients. */
export interface CertificateAuthority {
  keyPath: string;
  certPath: string;
  pem: string;
}

/** What a server certificate is issued for, and where its files go. */
export interface ServerCertificateRequest {
  commonName: string;
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
  outDir: string;
  osUser: OsUser;
  validDays?: number;
}

/** The files of an issued server certificate. */
export interface ServerCertificate {
  keyPath: string;
  certPath: string;
}

const CA_VALID_DAYS = 3650;
// The longest validity Apple's TLS clients accept; rotation is a later issue.
const SERVER_VALID_DAYS = 825;
// P-256 keys: generated in milliseconds (RSA takes far longer) and accepted by every client.
const KEY_ARGS = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-noenc'];
const HOST_NAME =
  /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/**
 * Makes the deployment CA in `dir` (`ca.key` 0600, `ca.pem`) the first time and reuses it
 * after. Two callers at once are safe: each builds in a private directory and only the
 * first rename into place wins.
 */
export async function ensureCertificateAuthority(dir: string): Promise<CertificateAuthority> {
  const ca = { keyPath: join(dir, 'ca.key'), certPath: join(dir, 'ca.pem') };
  if (!(await exists(ca.keyPath)) || !(await exists(ca.certPath))) {
    await mkdir(dirname(dir), { recursive: true });
    const building = await mkdtemp(`${dir}.building-`);
    try {
      const config = join(building, 'ca.cnf');
      await writeFile(config, caConfig());
      const request = ['req', '-x509', ...KEY_ARGS, '-config', config, '-days', `${CA_VALID_DAYS}`];
      const out = ['-keyout', join(building, 'ca.key'), '-out', join(building, 'ca.pem')];
      await openssl([...request, ...out]);
      await chmod(join(building, 'ca.key'), 0o600);
      await rm(config);
      for (const file of ['ca.key', 'ca.pem', '.']) await fsyncPath(join(building, file));
      await rename(building, dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      });
      await fsyncPath(dirname(dir));
    } finally {
      await rm(building, { recursive: true, force: true });
    }
  }
  return { ...ca, pem: await readFile(ca.certPath, 'utf8') };
}

/**
 * Issues `server.key` (0600, owned by the OS user, as PostgreSQL demands) and
 * `server.crt` in `outDir`, signed by the CA, with every host name and IP address as a
 * subjectAltName (clients that verify check those, not the common name).
 */
export async function issueServerCertificate(
  ca: CertificateAuthority,
  request: ServerCertificateRequest,
): Promise<ServerCertificate> {
  return issue(ca, request, 'serverAuth', subjectAltNames(request));
}

/**
 * Issues a client certificate for the role `commonName` (PostgreSQL's `cert` method logs
 * in the role its common name names), as `server.key` and `server.crt` in `outDir`.
 */
export async function issueClientCertificate(
  ca: CertificateAuthority,
  request: Omit<ServerCertificateRequest, 'dnsNames' | 'ipAddresses'>,
): Promise<ServerCertificate> {
  if (!/^[a-z_][a-z0-9_]*$/.test(request.commonName))
    throw new Error(`not a role name: '${request.commonName}'`);
  return issue(ca, { ...request, dnsNames: [], ipAddresses: [] }, 'clientAuth', []);
}

async function issue(
  ca: CertificateAuthority,
  request: ServerCertificateRequest,
  usage: 'serverAuth' | 'clientAuth',
  altNames: readonly string[],
): Promise<ServerCertificate> {
  const result = {
    keyPath: join(request.outDir, 'server.key'),
    certPath: join(request.outDir, 'server.crt'),
  };
  await mkdir(request.outDir, { recursive: true });
  // A private (0700) work directory beside the result: the key is never readable by
  // others, not even briefly, and the final renames stay on one file system.
  const work = await mkdtemp(join(request.outDir, '.issuing-'));
  try {
    const [key, csr, crt] = ['server.key', 'server.csr', 'server.crt'].map((f) => join(work, f));
    const config = join(work, 'server.cnf');
    await writeFile(config, leafConfig(request.commonName, usage, altNames));
    await openssl(['req', '-new', ...KEY_ARGS, '-config', config, '-keyout', key, '-out', csr]);
    const serial = `0x${randomBytes(16).toString('hex')}`;
    const days = `${request.validDays ?? SERVER_VALID_DAYS}`;
    const signer = ['-CA', ca.certPath, '-CAkey', ca.keyPath, '-set_serial', serial, '-sha256'];
    const extensions = ['-extfile', config, '-extensions', 'server'];
    await openssl([
      'x509',
      '-req',
      '-in',
      csr,
      ...signer,
      '-days',
      days,
      ...extensions,
      '-out',
      crt,
    ]);
    await chownFile(key, request.osUser, 0o600);
    await chownFile(crt, request.osUser, 0o644);
    for (const file of [key, crt]) await fsyncPath(file);
    await rename(key, result.keyPath);
    await rename(crt, result.certPath);
    await fsyncPath(request.outDir);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return result;
}

function subjectAltNames(request: ServerCertificateRequest): string[] {
  const all = [request.commonName, ...request.dnsNames, ...request.ipAddresses];
  const ips = all.filter((name) => isIP(name) !== 0);
  const dnsNames = all.filter((name) => isIP(name) === 0);
  const bad = dnsNames.find((name) => !HOST_NAME.test(name));
  if (bad !== undefined) throw new Error(`not a host name or IP address: '${bad}'`);
  const badIp = request.ipAddresses.find((ip) => isIP(ip) === 0);
  if (badIp !== undefined) throw new Error(`not an IP address: '${badIp}'`);
  return [...new Set([...dnsNames.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)])];
}

function caConfig(): string {
  return [
    '[req]',
    'distinguished_name = dn',
    'prompt = no',
    'x509_extensions = ca',
    '[dn]',
    'CN = pgcloud deployment CA',
    '[ca]',
    'basicConstraints = critical, CA:TRUE',
    'keyUsage = critical, keyCertSign, cRLSign',
    'subjectKeyIdentifier = hash',
    '',
  ].join('\n');
}

// One file for both steps: the request's subject and the extensions the CA signs.
function leafConfig(
  commonName: string,
  usage: 'serverAuth' | 'clientAuth',
  altNames: readonly string[],
): string {
  return [
    '[req]',
    'distinguished_name = dn',
    'prompt = no',
    '[dn]',
    `CN = ${commonName}`,
    '[server]',
    'basicConstraints = critical, CA:FALSE',
    'keyUsage = critical, digitalSignature, keyEncipherment',
    `extendedKeyUsage = ${usage}`,
    ...(altNames.length > 0 ? [`subjectAltName = ${altNames.join(', ')}`] : []),
    'subjectKeyIdentifier = hash',
    'authorityKeyIdentifier = keyid, issuer',
    '',
  ].join('\n');
}

async function openssl(args: string[]): Promise<void> {
  try {
    await execFileAsync('openssl', args);
  } catch (err) {
    const output = (err as { stderr?: string | Buffer }).stderr ?? '';
    const stderr = (typeof output === 'string' ? output : output.toString('utf8')).trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr.split('\n').slice(-4).join('\n')}`);
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
