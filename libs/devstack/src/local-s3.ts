import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { canConnect, freePort } from '@pgcloud/testing';
import {
  CephPaths,
  DAEMONS,
  assertCephInstalled,
  createCluster,
  createOsd,
  createS3User,
  readState,
  run,
  writeState,
} from './ceph-cluster.js';

/** How to reach a local S3: what an `ObjectStore` of @pgcloud/storage is made from. */
export interface LocalS3Credentials {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The same S3 over HTTPS, and the certificate to trust (none on clusters set up before). */
  tls?: { endpoint: string; certFile: string };
}

// RGW's default zonegroup answers to any region name; this is the SDK's usual default.
const REGION = 'us-east-1';
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * A single-node Ceph cluster (one monitor, one OSD on a sparse BlueStore file) with an RGW
 * serving S3, under `<dir>/ceph/`: Debian's packages, all on 127.0.0.1. The first start
 * sets it up (about 15 s); later starts on the same directory reuse its data and S3 user
 * (about 5 s). The daemons run as whoever runs this, root included: they need no switch
 * of user, as every file they touch is under `dir`.
 */
export class LocalS3 {
  private readonly paths: CephPaths;
  private readonly sizeGib: number | undefined;

  /** `sizeGib`: what the store holds (10 GiB), set when it is first set up. */
  constructor(dir: string, { sizeGib }: { sizeGib?: number } = {}) {
    this.paths = new CephPaths(join(dir, 'ceph'));
    this.sizeGib = sizeGib;
  }

  /** Sets the cluster up if needed, starts its daemons and waits until S3 answers. */
  async start(): Promise<LocalS3Credentials> {
    assertCephInstalled();
    // Daemons left behind by a killed run hold the ports and the OSD's lock.
    await this.stop();
    let state = readState(this.paths);
    if (!state) {
      // A setup that did not finish leaves a half-made store: start again from nothing.
      rmSync(this.paths.dir, { recursive: true, force: true });
      const ports = {
        monPort: await freePort(),
        rgwPort: await freePort(),
        tlsPort: await freePort(),
      };
      const fsid = await createCluster(this.paths, ports, this.sizeGib);
      await this.startDaemon('mon.a');
      await createOsd(this.paths);
      await this.startDaemon('osd.0');
      await this.startDaemon('client.rgw.a');
      await this.waitForS3(ports.rgwPort);
      state = { fsid, ...ports, ...(await createS3User(this.paths)) };
      writeState(this.paths, state);
    } else {
      // The monitor's address is in its store; the ports cannot change after setup.
      for (const port of [
        state.monPort,
        state.rgwPort,
        ...(state.tlsPort ? [state.tlsPort] : []),
      ]) {
        if (await canConnect('127.0.0.1', port, 500)) {
          throw new Error(
            `port ${port} of the local S3 in ${this.paths.dir} is taken by another process; ` +
              'stop that, or remove the directory to set up anew on free ports',
          );
        }
      }
      for (const daemon of DAEMONS) await this.startDaemon(daemon.name);
      await this.waitForS3(state.rgwPort);
    }
    return {
      endpoint: `http://127.0.0.1:${state.rgwPort}`,
      accessKeyId: state.accessKeyId,
      secretAccessKey: state.secretAccessKey,
      region: REGION,
      ...(state.tlsPort
        ? { tls: { endpoint: `https://127.0.0.1:${state.tlsPort}`, certFile: this.paths.tlsCert } }
        : {}),
    };
  }

  /**
   * Stops this cluster's daemons, the data stays. One at a time, RGW first: a client of a
   * stopped OSD waits on its requests instead of exiting.
   */
  async stop(): Promise<void> {
    for (const daemon of [...DAEMONS].reverse()) await terminate(this.runningPid(daemon.name));
  }

  /** Stops the daemons and removes the cluster's directory. */
  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.paths.dir, { recursive: true, force: true });
  }

  private async startDaemon(name: string): Promise<void> {
    const daemon = DAEMONS.find((d) => d.name === name);
    if (!daemon) throw new Error(`no Ceph daemon ${name}`);
    try {
      await run(daemon.program, ['-c', this.paths.conf, ...daemon.args]);
    } catch (err) {
      throw new Error(`${name} did not start; see ${this.paths.logFile(name)}`, { cause: err });
    }
  }

  private async waitForS3(port: number): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      // Any HTTP answer will do: anonymous requests get one once RGW serves.
      const answered = await fetch(`http://127.0.0.1:${port}/`, {
        signal: AbortSignal.timeout(2000),
      }).then(
        (res) => res.body?.cancel().then(() => true) ?? true,
        () => false,
      );
      if (answered) return;
      if (this.runningPid('client.rgw.a') === undefined) {
        throw new Error(`radosgw exited; see ${this.paths.logFile('client.rgw.a')}`);
      }
      if (Date.now() > deadline) {
        throw new Error(
          `the local S3 did not answer on 127.0.0.1:${port} within ${START_TIMEOUT_MS / 1000} s; ` +
            `see ${this.paths.logFile('client.rgw.a')}`,
        );
      }
      await sleep(100);
    }
  }

  /**
   * The daemon's pid from its pid file, if that process still runs and is ours: a pid
   * file outlives a killed daemon, and its number may have gone to another process.
   */
  private runningPid(name: string): number | undefined {
    const pidFile = this.paths.pidFile(name);
    if (!existsSync(pidFile)) return undefined;
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return cmdline.includes(this.paths.conf) ? pid : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Sends SIGTERM and waits for the process to exit; SIGKILL if it takes too long. */
async function terminate(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  signal(pid, 'SIGTERM');
  while (alive(pid)) {
    if (Date.now() > deadline) signal(pid, 'SIGKILL');
    await sleep(50);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie still answers signal 0; it has exited all the same.
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // It exited meanwhile.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
