import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

/** What a single-node cluster needs to be started again: written once, at setup. */
export interface CephClusterState {
  fsid: string;
  monPort: number;
  rgwPort: number;
  /** RGW's HTTPS port (a self-signed certificate); clusters set up before it have none. */
  tlsPort?: number;
  accessKeyId: string;
  secretAccessKey: string;
}

/** The Ceph programs we run, with the Debian package that brings each one. */
const PROGRAMS: Record<string, string> = {
  'ceph-mon': 'ceph-mon',
  'ceph-osd': 'ceph-osd',
  radosgw: 'radosgw',
  'radosgw-admin': 'ceph-common',
  ceph: 'ceph-common',
  'ceph-authtool': 'ceph-common',
  monmaptool: 'ceph-base',
};
export const CEPH_APT_INSTALL =
  'apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd';
// Children get a fixed environment: an inherited CEPH_CONF or CEPH_ARGS must not point a
// daemon at another cluster.
const BASE_ENV: Record<string, string> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  LC_ALL: 'C',
};
// RGW's user: S3 keys are per user, and a fresh cluster has none.
const S3_USER = 'pgcloud';
// Sparse, so it costs only what the tests write; BlueStore wants room for its metadata.
const DEFAULT_BLOCK_GIB = 10;
const STDERR_LINES_IN_ERRORS = 8;

/** Fails, naming the apt packages, when a Ceph program is not installed. */
export function assertCephInstalled(): void {
  const dirs = BASE_ENV['PATH']?.split(delimiter) ?? [];
  const missing = Object.keys(PROGRAMS).filter(
    (program) => !dirs.some((dir) => isExecutable(join(dir, program))),
  );
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map((program) => PROGRAMS[program]))].join(', ');
  throw new Error(
    `the local S3 needs Ceph's ${missing.join(', ')} (Debian packages: ${packages}); ` +
      `install them with \`${CEPH_APT_INSTALL}\`, or set S3_ENDPOINT to another S3`,
  );
}

/** The files of a cluster that lives in `dir`. */
export class CephPaths {
  constructor(readonly dir: string) {}
  get conf(): string {
    return join(this.dir, 'ceph.conf');
  }
  get state(): string {
    return join(this.dir, 'state.json');
  }
  get keyring(): string {
    return join(this.dir, 'keyring');
  }
  /** RGW's self-signed certificate for its HTTPS port: what a client trusts. */
  get tlsCert(): string {
    return join(this.dir, 'rgw', 'tls.crt');
  }
  get tlsKey(): string {
    return join(this.dir, 'rgw', 'tls.key');
  }
  pidFile(daemon: string): string {
    return join(this.dir, 'run', `${daemon}.pid`);
  }
  logFile(daemon: string): string {
    return join(this.dir, 'log', `${daemon}.log`);
  }
}

/** The daemons in start order, by their Ceph names, with the command that starts each. */
export const DAEMONS = [
  { name: 'mon.a', program: 'ceph-mon', args: ['-i', 'a'] },
  { name: 'osd.0', program: 'ceph-osd', args: ['-i', '0'] },
  { name: 'client.rgw.a', program: 'radosgw', args: ['-n', 'client.rgw.a'] },
] as const;

/**
 * Writes ceph.conf and the keys, and makes the monitor's store; the monitor is not started.
 * The OSD's store holds `blockGib` GiB: once about 95% full, Ceph refuses writes.
 */
export async function createCluster(
  paths: CephPaths,
  ports: CephPorts,
  blockGib = DEFAULT_BLOCK_GIB,
): Promise<string> {
  const fsid = randomUUID();
  for (const sub of ['mon/a', 'osd/0', 'run', 'log', 'rgw']) {
    mkdirSync(join(paths.dir, sub), { recursive: true });
  }
  // HTTPS too, for clients that speak S3 only over TLS (pgBackRest, in bench/).
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '3650',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    // pgBackRest matches only DNS names, so the address is one too.
    'subjectAltName=IP:127.0.0.1,DNS:127.0.0.1,DNS:localhost',
    '-keyout',
    paths.tlsKey,
    '-out',
    paths.tlsCert,
  ]);
  writeFileSync(paths.conf, cephConf(paths, fsid, ports, blockGib));
  // One keyring for every daemon and the admin: it is a throwaway cluster on 127.0.0.1, and
  // the monitor's mkfs takes every key (with its caps) from it, so no `ceph auth add` later.
  const keys: [string, string[]][] = [
    ['mon.', ['mon', 'allow *']],
    ['client.admin', ['mon', 'allow *', 'osd', 'allow *', 'mgr', 'allow *']],
    ['osd.0', ['mon', 'allow profile osd', 'osd', 'allow *']],
    ['client.rgw.a', ['mon', 'allow rw', 'osd', 'allow rwx']],
  ];
  for (const [index, [entity, caps]] of keys.entries()) {
    const capArgs = caps.flatMap((cap, i) => (i % 2 === 0 ? ['--cap', cap] : [cap]));
    const create = index === 0 ? ['--create-keyring'] : [];
    await run('ceph-authtool', [paths.keyring, ...create, '--gen-key', '-n', entity, ...capArgs]);
  }
  const monmap = join(paths.dir, 'monmap');
  await run('monmaptool', [
    '--create',
    '--fsid',
    fsid,
    '--addv',
    'a',
    `[v2:127.0.0.1:${ports.monPort}]`,
    monmap,
  ]);
  await run('ceph-mon', ['-c', paths.conf, '-i', 'a', '--mkfs', '--monmap', monmap]);
  return fsid;
}

/** Registers the OSD with the running monitor and makes its BlueStore. */
export async function createOsd(paths: CephPaths): Promise<void> {
  const uuid = randomUUID();
  await ceph(paths, ['osd', 'new', uuid, '0']);
  await run('ceph-osd', ['-c', paths.conf, '-i', '0', '--mkfs', '--osd-uuid', uuid]);
}

/** Makes the S3 user; radosgw-admin generates its keys, which only its output carries. */
export async function createS3User(
  paths: CephPaths,
): Promise<{ accessKeyId: string; secretAccessKey: string }> {
  const { stdout } = await run('radosgw-admin', [
    '-c',
    paths.conf,
    'user',
    'create',
    `--uid=${S3_USER}`,
    '--display-name=pgcloud tests',
  ]);
  const user = JSON.parse(stdout) as { keys: { access_key: string; secret_key: string }[] };
  const key = user.keys[0];
  if (!key) throw new Error('radosgw-admin made the S3 user without keys');
  return { accessKeyId: key.access_key, secretAccessKey: key.secret_key };
}

/** Runs the `ceph` command-line tool against the cluster as its admin. */
export function ceph(paths: CephPaths, args: readonly string[]): Promise<{ stdout: string }> {
  return run('ceph', ['-c', paths.conf, '--connect-timeout', '30', ...args]);
}

/** The state written at setup, or undefined when setup never finished. */
export function readState(paths: CephPaths): CephClusterState | undefined {
  try {
    return JSON.parse(readFileSync(paths.state, 'utf8')) as CephClusterState;
  } catch {
    return undefined;
  }
}

/** Records a finished setup; it holds the S3 secret, so only we may read it. */
export function writeState(paths: CephPaths, state: CephClusterState): void {
  writeFileSync(paths.state, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Runs a Ceph program without a shell. The daemons fork and their parent exits once they
 * run; on failure the error names the program and ends with its stderr.
 */
export async function run(program: string, args: readonly string[]): Promise<{ stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(program, args, {
      env: BASE_ENV,
      cwd: '/',
      maxBuffer: 16 * 1024 * 1024,
    });
    return { stdout };
  } catch (err) {
    const { code, stderr } = err as { code?: number | string; stderr?: string };
    const tail = (stderr ?? '').trim().split('\n').slice(-STDERR_LINES_IN_ERRORS).join('\n');
    throw new Error(`${program} failed (exit ${String(code)})${tail ? `:\n${tail}` : ''}`, {
      cause: err,
    });
  }
}

/** The ports a cluster serves on, chosen at setup. */
export interface CephPorts {
  monPort: number;
  rgwPort: number;
  tlsPort: number;
}

function cephConf(paths: CephPaths, fsid: string, ports: CephPorts, blockGib: number): string {
  const { dir } = paths;
  return `[global]
fsid = ${fsid}
mon_host = v2:127.0.0.1:${ports.monPort}
public_addr = 127.0.0.1
ms_bind_ipv6 = false
ms_bind_msgr1 = false
# cephx: RGW does not run with auth none.
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
keyring = ${dir}/keyring
run_dir = ${dir}/run
pid_file = ${dir}/run/$name.pid
admin_socket = ${dir}/run/$name.asok
log_file = ${dir}/log/$name.log
# One OSD: pools of one copy, few placement groups, and no complaint about either.
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
# A developer's disk is often more than 70 % full; the monitor would warn, then stop at 95 %.
mon_data_avail_warn = 5
mon_data_avail_crit = 1

[mon.a]
mon_data = ${dir}/mon/a
# Each pool RGW makes takes a few monitor proposals; the default 1 s between them made
# setup and the first bucket about 10 s slower.
paxos_propose_interval = 0.1

[osd.0]
osd_data = ${dir}/osd/0
osd_objectstore = bluestore
# mkfs puts a "block" link to this file into osd_data, so the file itself lives beside it.
bluestore_block_path = ${dir}/osd-0.block
bluestore_block_create = true
bluestore_block_size = ${blockGib * 1024 ** 3}

[client.rgw.a]
rgw_frontends = beast endpoint=127.0.0.1:${ports.rgwPort} ssl_endpoint=127.0.0.1:${ports.tlsPort} ssl_certificate=${paths.tlsCert} ssl_private_key=${paths.tlsKey}
rgw_data = ${dir}/rgw
# The lifecycle thread sleeps 5 s at a time and RGW's shutdown waits for it; nothing here
# uses bucket lifecycle rules.
rgw_enable_lc_threads = false
`;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
