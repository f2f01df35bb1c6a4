import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { freePort } from '@pgcloud/testing';
import type { SecretLookup } from './cnpg-cluster-fields.js';
import type { Termination } from './container-process.js';
import { ContainerProcess } from './container-process.js';
import { containerEnv, containerMounts } from './pod-env.js';
import type { StandInContainer, StandInPodSpec } from './pod-fields.js';
import { DEFAULT_TERMINATION_PATH } from './pod-fields.js';
import { makeVolumes } from './pod-volumes.js';

/** Where a pod's processes run and what they start from. */
export interface PodProcessesOptions {
  /** The pod's own directory (volumes, termination files, logs); stop() removes it. */
  podDir: string;
  /** Every process's working directory: the stand-in for the image's filesystem. */
  imageRoot: string;
  /** The environment every process starts from (the image's own: PATH, PG_BIN_DIR...). */
  baseEnv: Record<string, string>;
  /** The Secrets of the pod's namespace. */
  secrets: SecretLookup;
}

/** A declared containerPort and the local port standing in for it. */
export interface PodPort {
  name?: string;
  containerPort: number;
  localPort: number;
}

/** The v1 Pod phases. */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

interface ContainerRun {
  container: StandInContainer;
  process?: ContainerProcess;
  startedAt?: string;
  /** Why it has not started (PodInitializing, CreateContainerConfigError...). */
  waiting: { reason: string; message?: string };
  ended?: Termination;
}

const STOP_GRACE_MS = 10_000;
const PROBE_TIMEOUT_MS = 1000;

/**
 * A STAND-IN for the kubelet running one pod (restartPolicy Never): makes its volumes,
 * runs its init containers one after another, each to a successful end, then its
 * containers together, each as a local process (ContainerProcess) in `imageRoot` with
 * the image's environment and the container's (containerEnv: paths and ports made local).
 * Every declared containerPort gets a free local port (the pods share the host's
 * loopback). status() is the pod's `status`. What the kubelet does differently: restarts
 * (restartPolicy Always/OnFailure), image pulls, probes on their own schedule (here on
 * each status()), liveness and exec/http probes, resource limits, sidecars.
 */
export class PodProcesses {
  private readonly inits: ContainerRun[];
  private readonly mains: ContainerRun[];
  private readonly startTime = now();
  private readonly transitions = new Map<string, { status: string; time: string }>();
  private stopping = false;
  private running: Promise<void> = Promise.resolve();

  private constructor(
    spec: StandInPodSpec,
    private readonly options: PodProcessesOptions,
    readonly ports: readonly PodPort[],
  ) {
    const waiting = (container: StandInContainer): ContainerRun => ({
      container,
      waiting: { reason: 'PodInitializing' },
    });
    this.inits = (spec.initContainers ?? []).map(waiting);
    this.mains = spec.containers.map(waiting);
  }

  /** Takes local ports for the pod's containerPorts and starts running it. */
  static async start(spec: StandInPodSpec, options: PodProcessesOptions): Promise<PodProcesses> {
    const ports: PodPort[] = [];
    for (const container of [...(spec.initContainers ?? []), ...spec.containers])
      for (const { name, containerPort } of container.ports ?? [])
        ports.push({ ...(name ? { name } : {}), containerPort, localPort: await freePort() });
    const pod = new PodProcesses(spec, options, ports);
    pod.running = pod.run(spec);
    return pod;
  }

  /** Pending while it is set up or initialising, then Running, Succeeded or Failed. */
  get phase(): PodPhase {
    const failed = (run: ContainerRun) => run.ended !== undefined && run.ended.exitCode !== 0;
    if (this.inits.some(failed)) return 'Failed';
    if (this.inits.some((run) => !run.ended)) return 'Pending';
    if (this.mains.some((run) => !run.ended && !run.process)) return 'Pending';
    if (this.mains.some((run) => !run.ended)) return 'Running';
    return this.mains.some(failed) ? 'Failed' : 'Succeeded';
  }

  /** The pod's `status`, its containers' readiness probed now. */
  async status(): Promise<Record<string, unknown>> {
    const mains = await Promise.all(this.mains.map((run) => this.containerStatus(run, true)));
    const inits = await Promise.all(this.inits.map((run) => this.containerStatus(run, false)));
    const initialized = this.inits.every((run) => run.ended?.exitCode === 0);
    const ready = this.phase === 'Running' && mains.every((status) => status.ready);
    return {
      phase: this.phase,
      hostIP: '127.0.0.1',
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      startTime: this.startTime,
      conditions: [
        this.condition('PodScheduled', true),
        this.condition('Initialized', initialized),
        this.condition('ContainersReady', ready),
        this.condition('Ready', ready),
      ],
      ...(inits.length > 0 ? { initContainerStatuses: inits } : {}),
      containerStatuses: mains,
    };
  }

  /**
   * Stops the pod as a deletion does: no further container starts, SIGTERM to each running
   * process, SIGKILL after 10 s, then removes its directory (its emptyDirs with it).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.inits, ...this.mains].map(async (run) => {
        await run.process?.terminate(STOP_GRACE_MS);
      }),
    );
    await this.running;
    await rm(this.options.podDir, { recursive: true, force: true });
  }

  private async run(spec: StandInPodSpec): Promise<void> {
    let volumeDirs: Map<string, string>;
    try {
      await mkdir(join(this.options.podDir, 'logs'), { recursive: true });
      await mkdir(join(this.options.podDir, 'termination'), { recursive: true });
      volumeDirs = await makeVolumes(
        spec.volumes ?? [],
        join(this.options.podDir, 'volumes'),
        this.options.secrets,
      );
    } catch (err) {
      for (const run of [...this.inits, ...this.mains])
        run.waiting = { reason: 'ContainerCreating', message: errorText(err) };
      return;
    }
    for (const run of this.inits) {
      const ended = await this.runContainer(run, volumeDirs);
      if (ended?.exitCode !== 0) return;
    }
    await Promise.all(this.mains.map((run) => this.runContainer(run, volumeDirs)));
  }

  private async runContainer(
    run: ContainerRun,
    volumeDirs: ReadonlyMap<string, string>,
  ): Promise<Termination | undefined> {
    if (this.stopping) return undefined;
    const { container } = run;
    const terminationFile = join(this.options.podDir, 'termination', container.name);
    let env: Record<string, string>;
    try {
      env = containerEnv(container, this.options.secrets, {
        mounts: containerMounts(container, volumeDirs),
        terminationPath: container.terminationMessagePath ?? DEFAULT_TERMINATION_PATH,
        terminationFile,
        ports: new Map(this.ports.map((port) => [port.containerPort, port.localPort])),
      });
      await writeFile(terminationFile, '');
    } catch (err) {
      run.waiting = { reason: 'CreateContainerConfigError', message: errorText(err) };
      return undefined;
    }
    run.startedAt = now();
    run.process = ContainerProcess.start({
      argv: [...(container.command ?? []), ...(container.args ?? [])],
      cwd: this.options.imageRoot,
      env: { ...this.options.baseEnv, ...env },
      logFile: join(this.options.podDir, 'logs', `${container.name}.log`),
      terminationFile,
      fallbackToLogs: container.terminationMessagePolicy === 'FallbackToLogsOnError',
    });
    run.ended = await run.process.ended;
    return run.ended;
  }

  private async containerStatus(run: ContainerRun, main: boolean) {
    const { container, ended, startedAt } = run;
    let state: Record<string, unknown>;
    if (ended) {
      const { finishedAt, ...terminated } = ended;
      state = { terminated: { ...terminated, startedAt, finishedAt } };
    } else if (run.process) state = { running: { startedAt } };
    else state = { waiting: run.waiting };
    const ready = main && !ended && run.process !== undefined && (await this.probe(container));
    return {
      name: container.name,
      image: container.image ?? '',
      imageID: '',
      ...(run.process?.pid ? { containerID: `stand-in://${run.process.pid}` } : {}),
      ready,
      started: run.process !== undefined && !ended,
      restartCount: 0,
      state,
    };
  }

  /** A tcpSocket readinessProbe: the local port standing in for its port accepts. */
  private async probe(container: StandInContainer): Promise<boolean> {
    const port = container.readinessProbe?.tcpSocket?.port;
    if (port === undefined) return true;
    const declared = this.ports.find((p) =>
      typeof port === 'number' ? p.containerPort === port : p.name === port,
    );
    const localPort = declared?.localPort ?? (typeof port === 'number' ? port : undefined);
    return localPort !== undefined && accepts(localPort);
  }

  /** A condition whose lastTransitionTime moves only when its status does. */
  private condition(type: string, holds: boolean) {
    const status = holds ? 'True' : 'False';
    const last = this.transitions.get(type);
    const time = last?.status === status ? last.time : now();
    this.transitions.set(type, { status, time });
    return { type, status, lastTransitionTime: time };
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port, timeout: PROBE_TIMEOUT_MS });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
