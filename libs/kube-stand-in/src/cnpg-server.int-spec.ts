import type { OsUser } from '@pgcloud/postgres';
import {
  checkTlsLogin,
  ensureCertificateAuthority,
  pgBinDir,
  resolveOsUser,
} from '@pgcloud/postgres';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { access, mkdir, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '@pgcloud/testing';
import { CnpgServerProcess } from './cnpg-server.js';
import { standInPaths } from './cnpg-server-files.js';
import {
  clusterG1,
  clusterG2,
  HOSTSSL_ONLY,
  lookup,
  makeSecrets,
  namespace,
  passwords,
  PG_HBA,
} from './cnpg-server.int-fixtures.js';
import type { StandInService } from './service-proxy-stand-in.js';
import { ServiceProxyStandIn } from './service-proxy-stand-in.js';

// In the temp folder: the postgres OS user reaches it and socket paths stay short.
const root = join(tmpdir(), 'pgcloud-test-cnpg', randomBytes(4).toString('hex'));

describe('CnpgServerProcess (CNPG stand-in) and ServiceProxyStandIn with real PostgreSQL', () => {
  const proxies = new ServiceProxyStandIn();
  let osUser: OsUser;
  let caPem: string;
  let servicePort: number;
  let g1: CnpgServerProcess;
  const servers: CnpgServerProcess[] = [];

  const service = (cluster: string): StandInService => ({
    metadata: { name: 'srv-t', namespace },
    spec: {
      type: 'LoadBalancer',
      selector: { 'cnpg.io/cluster': cluster, 'cnpg.io/instanceRole': 'primary' },
      ports: [{ name: 'postgres', port: servicePort, targetPort: 5432, protocol: 'TCP' }],
    },
  });
  // The pods a stand-in would show: one primary per server, Running while its server runs.
  const pods = () =>
    servers.map((server, i) => ({
      labels: { 'cnpg.io/cluster': `srv-t-g${i + 1}`, 'cnpg.io/instanceRole': 'primary' },
      phase: server.state === 'hibernated' || server.state === 'destroyed' ? 'Pending' : 'Running',
      port: server.port,
    }));

  async function connect(
    port: number,
    options: { user?: string; password?: string; tls?: boolean } = {},
  ): Promise<pg.Client> {
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: options.user ?? 'appdb',
      database: options.user === 'postgres' ? 'postgres' : 'appdb',
      password: options.password ?? passwords.app,
      ssl: options.tls === false ? false : { ca: caPem, rejectUnauthorized: true },
      connectionTimeoutMillis: 5000,
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  async function scalar(port: number, sql: string): Promise<string> {
    const client = await connect(port);
    try {
      const { rows } = await client.query<{ v: string }>(`SELECT (${sql})::text AS v`);
      return rows[0]?.v ?? '';
    } finally {
      await client.end();
    }
  }

  const loginError = (port: number, options: Parameters<typeof connect>[1]) =>
    connect(port, options).then(
      async (client) => {
        await client.end();
        return 'logged in';
      },
      (err: Error & { code?: string }) => err.code ?? err.message,
    );

  const exists = (path: string) =>
    access(path).then(
      () => true,
      () => false,
    );

  before(async () => {
    await mkdir(root, { recursive: true });
    osUser = await resolveOsUser(process.env.PG_OS_USER ?? 'postgres');
    const ca = await ensureCertificateAuthority(join(root, 'ca'));
    caPem = ca.pem;
    await makeSecrets(ca, root, osUser);
    servicePort = await freePort();
  });

  after(async () => {
    await proxies.stopAll();
    for (const server of servers) await server.destroy().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  const options = () => ({ dataRoot: join(root, 'servers'), binDir: pgBinDir(), osUser });

  it('starts an initdb Cluster and serves it over verified TLS through its Service', async () => {
    const startedAt = performance.now();
    g1 = await CnpgServerProcess.start(
      clusterG1({ work_mem: '7MB', max_connections: '40' }),
      lookup,
      options(),
    );
    servers.push(g1);
    console.log(`initdb Cluster up in ${Math.round(performance.now() - startedAt)} ms`);
    await proxies.apply(service('srv-t-g1'), pods());
    assert.deepEqual(proxies.loadBalancerStatus(service('srv-t-g1')), {
      loadBalancer: { ingress: [{ ip: '127.0.0.1' }] },
    });

    const client = await connect(servicePort);
    try {
      await client.query('CREATE TABLE notes (body text)');
      await client.query("INSERT INTO notes VALUES ('kept across clones')");
      const { rows } = await client.query<{ body: string }>('SELECT body FROM notes');
      assert.deepEqual(rows, [{ body: 'kept across clones' }]);
      const ssl = await client.query<{ ssl: boolean }>(
        'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
      );
      assert.equal(ssl.rows[0]?.ssl, true);
    } finally {
      await client.end();
    }
    assert.equal(await scalar(servicePort, "current_setting('work_mem')"), '7MB');
    assert.equal(await scalar(servicePort, "current_setting('max_connections')"), '40');
    assert.equal(await scalar(servicePort, "current_setting('cluster_name')"), 'srv-t-g1');
    const superuser = {
      host: '127.0.0.1',
      port: servicePort,
      database: 'postgres',
      user: 'postgres',
      password: passwords.superuser,
      caPem,
    };
    assert.equal(await checkTlsLogin(superuser), true);
  });

  it('refuses a login without TLS and one with a wrong password', async () => {
    assert.equal(await loginError(servicePort, { tls: false }), '28000');
    assert.equal(await loginError(servicePort, { password: 'wrong' }), '28P01');
  });

  it('clones it with pg_basebackup as the replication role, through the Service', async () => {
    const startedAt = performance.now();
    const g2 = await CnpgServerProcess.start(clusterG2(servicePort), lookup, options());
    servers.push(g2);
    console.log(`pg_basebackup Cluster up in ${Math.round(performance.now() - startedAt)} ms`);
    assert.equal(
      await scalar(g2.port, "(SELECT string_agg(body, ',') FROM notes)"),
      'kept across clones',
    );
    assert.equal(await scalar(g2.port, 'pg_is_in_recovery()'), 'false');
    // Promoted: it writes on a timeline of its own.
    assert.equal(
      await scalar(g2.port, 'left(pg_walfile_name(pg_current_wal_lsn()), 8)'),
      '00000002',
    );
    assert.equal(await scalar(g2.port, "current_setting('cluster_name')"), 'srv-t-g2');
  });

  it('sends new connections to the pod a changed selector names; open ones stay', async () => {
    const open = await connect(servicePort);
    try {
      await proxies.apply(service('srv-t-g2'), pods());
      assert.equal(proxies.targetOf(service('srv-t-g2')), servers[1]?.port);
      assert.equal(await scalar(servicePort, "current_setting('cluster_name')"), 'srv-t-g2');
      const { rows } = await open.query<{ c: string }>(
        "SELECT current_setting('cluster_name') AS c",
      );
      assert.equal(rows[0]?.c, 'srv-t-g1');
    } finally {
      await open.end();
    }
    await proxies.apply(service('srv-t-g1'), pods());
    assert.equal(await scalar(servicePort, "current_setting('cluster_name')"), 'srv-t-g1');
    const g2 = servers[1];
    assert.ok(g2);
    await g2.destroy();
    assert.equal(g2.state, 'destroyed');
    assert.equal(await exists(g2.pgdata), false);
  });

  it('applies a changed Cluster: reloads, restarts when a parameter needs it, roles', async () => {
    const reporting = {
      name: 'reporting',
      ensure: 'present',
      login: true,
      connectionLimit: 2,
      passwordSecret: { name: 'srv-t-reporting' },
    };
    let outcome = await g1.update(
      clusterG1({ work_mem: '9MB', max_connections: '40' }, PG_HBA, [reporting]),
      lookup,
    );
    assert.equal(outcome.restarted, false);
    assert.equal(await scalar(servicePort, "current_setting('work_mem')"), '9MB');
    // A plain password in the Secret: the role logs in with it (stored as a SCRAM verifier).
    const asReporting = await connect(servicePort, {
      user: 'reporting',
      password: passwords.reporting,
    });
    await asReporting.end();

    outcome = await g1.update(
      clusterG1({ work_mem: '9MB', max_connections: '45' }, PG_HBA, [
        { ...reporting, ensure: 'absent' },
      ]),
      lookup,
    );
    assert.equal(outcome.restarted, true);
    assert.equal(await scalar(servicePort, "current_setting('max_connections')"), '45');
    assert.equal(
      await scalar(servicePort, "(SELECT count(*) FROM pg_roles WHERE rolname = 'reporting')"),
      '0',
    );
    assert.equal(
      await scalar(servicePort, "(SELECT string_agg(body, ',') FROM notes)"),
      'kept across clones',
    );
  });

  it("keeps CNPG's closing pg_hba rule: without a reject line a plain login gets in", async () => {
    const parameters = { work_mem: '9MB', max_connections: '45' };
    await g1.update(clusterG1(parameters, HOSTSSL_ONLY), lookup);
    assert.equal(await loginError(servicePort, { tls: false }), 'logged in');
    await g1.update(clusterG1(parameters), lookup);
    assert.equal(await loginError(servicePort, { tls: false }), '28000');
  });

  it('refuses what the server or CNPG would not take and keeps serving the old settings', async () => {
    const parameters = { work_mem: '9MB', max_connections: '45' };
    await assert.rejects(
      g1.update(clusterG1({ ...parameters, port: '6543' }), lookup),
      /manages these parameters/,
    );
    await assert.rejects(
      g1.update(clusterG1({ ...parameters, work_mem: 'plenty' }), lookup),
      /refused its new configuration/,
    );
    assert.equal(await scalar(servicePort, "current_setting('work_mem')"), '9MB');
    await g1.update(clusterG1(parameters), lookup);
  });

  it('hibernates (connections refused) and wakes with its data', async () => {
    await g1.hibernate();
    assert.equal(g1.state, 'hibernated');
    await proxies.apply(service('srv-t-g1'), pods());
    assert.equal(proxies.targetOf(service('srv-t-g1')), undefined);
    assert.notEqual(await loginError(servicePort, {}), 'logged in');
    assert.equal(await loginError(g1.port, {}), 'ECONNREFUSED');
    await g1.wake();
    await proxies.apply(service('srv-t-g1'), pods());
    assert.equal(
      await scalar(servicePort, "(SELECT string_agg(body, ',') FROM notes)"),
      'kept across clones',
    );
  });

  it('loses its server like a lost pod: it stays down until woken', async () => {
    await g1.lose();
    assert.equal(g1.state, 'lost');
    assert.equal(await loginError(g1.port, {}), 'ECONNREFUSED');
    await delay(1000);
    assert.equal(await loginError(g1.port, {}), 'ECONNREFUSED');
    // The pod still says Running (nothing updated it): the Service's connections fail.
    assert.notEqual(await loginError(servicePort, {}), 'logged in');
    await g1.wake();
    assert.equal(
      await scalar(servicePort, "(SELECT string_agg(body, ',') FROM notes)"),
      'kept across clones',
    );
  });

  it('destroy removes its data', async () => {
    await g1.destroy();
    assert.equal(await exists(g1.pgdata), false);
    assert.equal(await loginError(g1.port, {}), 'ECONNREFUSED');
    await proxies.remove(service('srv-t-g1'));
    assert.equal(await loginError(servicePort, {}), 'ECONNREFUSED');
  });

  it('leaves no server running when a start fails part-way, nor half-made data', async () => {
    const broken = clusterG1({});
    broken.metadata = { name: 'srv-t-g3', namespace };
    broken.spec.managed.roles.push({
      name: 'reporting',
      ensure: 'present',
      login: true,
      passwordSecret: { name: 'srv-t-missing' },
    });
    await assert.rejects(
      CnpgServerProcess.start(broken, lookup, options()),
      /'srv-t-missing' not found/,
    );
    const paths = standInPaths(options().dataRoot, namespace, 'srv-t-g3');
    assert.equal(await exists(paths.pgdata), false);
    const sockets = await readdir(paths.socketDir);
    assert.deepEqual(
      sockets.filter((name) => name.startsWith('.s.PGSQL')),
      [],
    );
  });
});
