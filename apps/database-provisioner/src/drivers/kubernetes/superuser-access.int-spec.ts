import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { OsUser } from '@pgcloud/postgres';
import { ensureCertificateAuthority, issueClientCertificate, SUPERUSER } from '@pgcloud/postgres';
import { freePort, WORKSPACE_ROOT } from '@pgcloud/testing';
import { KubernetesStandIn } from '@pgcloud/kube-stand-in';
import pg from 'pg';
import type { ServerEndpoint } from '../database-driver.js';
import { KubernetesDriver } from './kubernetes.driver.js';

const NAMESPACE = 'pgcloud-databases';
const SELF: OsUser = { name: 'self', uid: process.getuid?.() ?? 0, gid: 0, switchUser: false };

/**
 * The superuser of a server on Kubernetes logs in over TCP only with a client certificate
 * of the deployment CA, which the provisioner alone holds: the pg_hba lines the driver
 * gives the Cluster, as the CNPG stand-in applies them to a real server.
 */
describe('kubernetes driver: the superuser by certificate only', () => {
  let standIn: KubernetesStandIn;
  let driver: KubernetesDriver;
  let endpoint: ServerEndpoint;
  let caPem: string;
  let scratch: string;
  const serverId = `srv_${randomBytes(10).toString('hex')}`;

  /** A superuser login over TCP: the error it fails with, or 'logged in'. */
  const superuserLogin = async (options: Partial<pg.ClientConfig>): Promise<string> => {
    const client = new pg.Client({
      host: endpoint.host,
      port: endpoint.port,
      user: SUPERUSER,
      database: 'postgres',
      connectionTimeoutMillis: 5000,
      ...options,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return 'logged in';
    } catch (err) {
      return (err as Error).message;
    } finally {
      // A connection the server broke off in its handshake may never report its end.
      await Promise.race([client.end().catch(() => undefined), delay(1000)]);
    }
  };

  before(async () => {
    const pgBinDir =
      process.env.PG_BIN_DIR ??
      execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    standIn = await KubernetesStandIn.start({
      dataRoot: join(tmpdir(), 'pgcloud-test-drivers', `k8s-su-${randomBytes(4).toString('hex')}`),
      binDir: pgBinDir,
      osUser: process.env.PG_OS_USER ?? 'postgres',
      namespaces: ['pgcloud', NAMESPACE],
      imageRoot: WORKSPACE_ROOT,
    });
    driver = new KubernetesDriver({
      kubeConfig: await standIn.kubeConfig(),
      namespaces: { local: NAMESPACE },
      caNamespace: 'pgcloud',
      serviceType: 'LoadBalancer',
      imageName: 'ghcr.io/cloudnative-pg/postgresql:15',
      jobImage: 'pgcloud:stand-in',
      readyTimeoutMs: 60_000,
      pollMs: 100,
    });
    await driver.prepare();
    caPem = await driver.caCertificate();
    scratch = await mkdtemp(join(tmpdir(), 'pgcloud-superuser-'));
    endpoint = await driver.create({
      serverId,
      port: await freePort(),
      region: 'local',
      databaseName: 'shop',
      password: randomBytes(24).toString('base64url'),
      replicationPassword: randomBytes(24).toString('base64url'),
      config: { cpu: 0.5, memory: 0.5, storage: 1 },
    });
  });

  after(async () => {
    await driver?.destroy(serverId).catch(() => undefined);
    await driver?.close();
    await standIn?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('refuses the superuser a password login over TLS, and any login without TLS', async () => {
    const tls = { ca: caPem, rejectUnauthorized: true };
    for (const password of ['', 'postgres', randomBytes(12).toString('hex')])
      assert.match(
        await superuserLogin({ password, ssl: tls }),
        /certificate/i,
        `password ${JSON.stringify(password)}`,
      );
    assert.match(await superuserLogin({ password: 'postgres', ssl: false }), /no pg_hba|reject/i);
  });

  it('refuses a certificate of another CA, and logs the provisioner in with its own', async () => {
    const foreign = await ensureCertificateAuthority(join(scratch, 'foreign-ca'));
    const issued = await issueClientCertificate(foreign, {
      commonName: SUPERUSER,
      outDir: join(scratch, 'foreign-cert'),
      osUser: SELF,
    });
    const [cert, key] = await Promise.all([
      readFile(issued.certPath, 'utf8'),
      readFile(issued.keyPath, 'utf8'),
    ]);
    const refusal = await superuserLogin({
      ssl: { ca: caPem, cert, key, rejectUnauthorized: true },
    });
    assert.notEqual(refusal, 'logged in');
    // The driver's own superuser session (it reads the database's size that way).
    assert.equal(typeof (await driver.usedBytes(serverId)), 'number');
  });
});
