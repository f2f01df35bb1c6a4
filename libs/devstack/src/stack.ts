import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { AppName as CloudAppName, ServiceName } from '@pgcloud/contracts';
import type { ObjectStore } from '@pgcloud/storage';
import { HEALTH_PING } from '@pgcloud/contracts';
import { ServiceClient } from '@pgcloud/messaging';
import { rememberSecret, freePort, WORKSPACE_ROOT } from '@pgcloud/testing';
import { nodeRun } from './app-run.js';
import { brokerPasswords, ensureBrokerLogins } from './broker-logins.js';
import type { ContainerImage } from './container-app.js';
import { containerRun, removeStackContainers, stopContainer } from './container-app.js';
import { daemonAnswers, gatewayAnswers } from './http-answers.js';
import { dropIsolatedResources, newRunId } from './isolated-resources.js';
import { loadLauncherEnv } from './launcher-env.js';
import type { LogRecord } from './log-lines.js';
import { parseLogLines } from './log-lines.js';
import type { LocalS3 } from './local-s3.js';
import { stopLocalServers } from './local-servers.js';
import { missingPrerequisites } from './prerequisites.js';
import { bucketOf, provideS3 } from './run-s3.js';
import { stackEnv } from './stack-env.js';

/** The processes of the cloud stack, in start order. */
export const STACK_APPS = [
  'auth-service',
  'project-service',
  'database-provisioner',
  'backup-service',
  'pitr-worker',
  'notification-service',
  'api-gateway',
] as const;
/** What `npm run up` starts: the cloud stack and the local daemon. */
export const UP_APPS = [...STACK_APPS, 'local-daemon'] as const;
export type AppName = (typeof UP_APPS)[number];

const SERVICE_OF: Partial<Record<AppName, ServiceName>> = {
  'auth-service': 'auth',
  'project-service': 'projects',
  'database-provisioner': 'databases',
  'backup-service': 'backups',
  'pitr-worker': 'pitr',
  'notification-service': 'notifications',
};
const READY_TIMEOUT_MS = 60_000;

/** How a stack is started. */
export interface StackOptions {
  /** Settings for every app, over the launcher's environment. */
  env?: Record<string, string>;
  /** Which apps to run (default: all). */
  apps?: readonly AppName[];
  /**
   * A fresh metadata database and queue prefix of its own, dropped at stop: what tests
   * use, so they never meet another stack's data. `npm run up` runs on the configured ones.
   */
  isolated?: boolean;
  /** Where the apps' output goes: prefixed on this console, or one file per app. */
  output?: 'console' | 'files';
  /** Runs the apps as containers of this image, on the host's network (default: node). */
  containers?: ContainerImage | null;
}

/** A running stack of pgcloud processes, started the same way for `npm run up` and for tests. */
export class Stack {
  private static readonly logDirs: string[] = [];
  /** Running processes by instance name: the app's name, or `api-gateway-2` and so on. */
  private readonly children = new Map<string, ChildProcess>();
  // Per app: ends its log file once its output is read, answering when the file is closed.
  private readonly logEnds = new Map<string, () => Promise<void>>();
  /** Each cloud app instance's management port (a free one of its own). */
  private readonly managementPorts = new Map<string, number>();
  /** The last lines each instance wrote, for the error when one stops while starting. */
  private readonly outputTails = new Map<string, string>();
  /** The local S3 this stack started (none when S3_ENDPOINT names one). */
  private localS3: LocalS3 | undefined;
  readonly logDir: string;
  readonly baseUrl: string;

  private constructor(
    readonly id: string,
    readonly env: Record<string, string>,
    private readonly options: Required<StackOptions>,
    /** Each cloud app's RABBITMQ_URL: its own login (broker-logins.ts). */
    private readonly brokerUrls: Record<CloudAppName, string>,
  ) {
    this.baseUrl = `http://127.0.0.1:${env['GATEWAY_PORT']}`;
    this.logDir = join(WORKSPACE_ROOT, '.data', 'logs', id);
    if (options.output === 'files') Stack.logDirs.push(this.logDir);
  }

  /** The log folders of every stack this process started with file output. */
  static startedLogDirs(): readonly string[] {
    return Stack.logDirs;
  }

  static async start(options: StackOptions = {}): Promise<Stack> {
    const resolved: Required<StackOptions> = {
      env: options.env ?? {},
      apps: options.apps ?? STACK_APPS,
      isolated: options.isolated ?? true,
      output: options.output ?? 'files',
      containers: options.containers ?? null,
    };
    const launcher = loadLauncherEnv({ ...process.env, ...resolved.env });
    const problems = await missingPrerequisites(launcher);
    if (problems.length > 0) throw new Error(problems.join('\n'));
    const id = newRunId();
    const env = await stackEnv(launcher, resolved, id);
    const brokerUrls = await ensureBrokerLogins(env['RABBITMQ_URL'] ?? launcher.RABBITMQ_URL);
    // No log may hold an app's broker password or the stack's key (the e2e scan of every log).
    for (const password of Object.values(brokerPasswords())) rememberSecret(password);
    if (env['ENCRYPTION_KEY']) rememberSecret(env['ENCRYPTION_KEY']);
    const stack = new Stack(id, env, resolved, brokerUrls);
    try {
      const s3 = await provideS3({ ...process.env, ...env }, stack.dataDir);
      Object.assign(env, s3.env);
      stack.localS3 = s3.localS3;
      // All at once: each waits mostly on its own boot and migrations (the metadata
      // database and schemas are made safely by whichever comes first).
      const started = await Promise.allSettled(resolved.apps.map((app) => stack.startApp(app)));
      const failed = started.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    } catch (err) {
      await stack.stop();
      throw err;
    }
    return stack;
  }

  /** DATA_DIR of the stack's apps, as an absolute path. */
  get dataDir(): string {
    return resolve(WORKSPACE_ROOT, this.env['DATA_DIR'] ?? process.env['DATA_DIR'] ?? '.data');
  }

  /**
   * Starts one app and waits until it answers. `name` runs another replica of it;
   * `fileSizeLimitKiB` runs it under `ulimit -f`, so it dies if it writes a bigger file.
   */
  async startApp(
    app: AppName,
    options: { name?: string; env?: Record<string, string>; fileSizeLimitKiB?: number } = {},
  ): Promise<void> {
    await this.spawnApp(app, options.name ?? app, options.env ?? {}, options.fileSizeLimitKiB);
  }

  /** The stack's S3 bucket (close it after use). */
  bucket(): ObjectStore {
    return bucketOf({ ...process.env, ...this.env });
  }

  /** The pid of a running app instance. */
  pidOf(name: string): number | undefined {
    return this.children.get(name)?.pid;
  }

  /**
   * Starts one more api-gateway on a port of its own, as a second replica behind a load
   * balancer would run, with `env` over the stack's settings, and answers its base URL.
   * Stop it with stopApp(name).
   */
  async startExtraGateway(
    env: Record<string, string> = {},
  ): Promise<{ name: string; baseUrl: string }> {
    const port = await freePort();
    const name = `api-gateway-${port}`;
    await this.spawnApp('api-gateway', name, { ...env, GATEWAY_PORT: String(port) });
    return { name, baseUrl: `http://127.0.0.1:${port}` };
  }

  private async spawnApp(
    app: AppName,
    name: string,
    env: Record<string, string>,
    fileSizeLimitKiB?: number,
  ): Promise<void> {
    if (this.children.has(name)) return;
    if (app !== 'local-daemon') {
      const port = this.managementPorts.get(name) ?? (await freePort());
      this.managementPorts.set(name, port);
      env = { MANAGEMENT_PORT: String(port), RABBITMQ_URL: this.brokerUrls[app], ...env };
    }
    const files = this.options.output === 'files';
    const settings = { ...this.env, ...env, ...(files ? { NO_COLOR: '1' } : {}) };
    const { containers } = this.options;
    const run = containers
      ? containerRun(containers, { app, name, stackId: this.id, dataDir: this.dataDir, settings })
      : // On this console, text for people unless LOG_FORMAT says otherwise; in files, the
        // JSON lines an operator's collector reads.
        nodeRun(app, settings, fileSizeLimitKiB, files ? {} : { LOG_FORMAT: 'pretty' });
    const child = spawn(run.command, run.args, { env: run.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.set(name, child);
    this.pipeOutput(name, child);
    const port = app === 'local-daemon' ? 'DAEMON_PORT' : 'GATEWAY_PORT';
    const httpUrl = `http://127.0.0.1:${env[port] ?? this.env[port]}`;
    await this.waitReady(app, name, child, httpUrl);
  }

  /** The management server (/livez, /readyz, /metrics) of a cloud app instance. */
  managementUrl(name: string): string {
    const port = this.managementPorts.get(name);
    if (port === undefined) throw new Error(`${name} has no management port in this stack`);
    return `http://127.0.0.1:${port}`;
  }

  /** Stops one app (SIGTERM, then SIGKILL after 10 s), or kills it at once. */
  async stopApp(name: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.children.get(name);
    this.children.delete(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    // 'close' comes after 'exit', once the app's output has been read to its end (a process
    // it started may hold its pipes open longer: then its log ends a little after the exit).
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const { containers } = this.options;
    if (containers) await stopContainer(containers, this.id, name, signal);
    else child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    await Promise.race([closed, delay(2000)]);
    await this.logEnds.get(name)?.();
  }

  /** Stops every app; their logs are complete when this answers. */
  async stopApps(): Promise<void> {
    for (const app of [...this.children.keys()].reverse()) await this.stopApp(app);
  }

  /** Stops every app and, for an isolated stack, drops its database and queues. */
  async stop(): Promise<void> {
    await this.stopApps();
    const { containers } = this.options;
    // A container's database servers end with it (their pids are the container's own).
    if (containers) await removeStackContainers(containers, this.id);
    else await stopLocalServers(this.dataDir, this.env['PG_OS_USER']);
    if (this.options.isolated) {
      await dropIsolatedResources(this.env);
      await this.localS3?.destroy();
      rmSync(this.dataDir, { recursive: true, force: true });
    } else {
      await this.localS3?.stop();
    }
  }

  /** Runs an operator command of an app (such as auth-service's admin) with the stack's settings. */
  async runAdmin(app: AppName, args: string[]): Promise<string> {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(WORKSPACE_ROOT, 'apps', app, 'dist', 'admin.js'), ...args],
      {
        env: { ...process.env, ...this.env },
      },
    );
    return stdout;
  }

  /** Everything an app (or a named instance of one) has written so far (file output only). */
  logOf(name: string): string {
    return readFileSync(join(this.logDir, `${name}.log`), 'utf8');
  }

  /** The JSON log records an app has written so far (lines that are not JSON are left out). */
  logRecords(name: string): LogRecord[] {
    return parseLogLines(this.logOf(name));
  }

  private pipeOutput(app: string, child: ChildProcess): void {
    this.outputTails.set(app, '');
    for (const stream of [child.stdout, child.stderr])
      stream?.on('data', (chunk: Buffer) =>
        this.outputTails.set(
          app,
          ((this.outputTails.get(app) ?? '') + chunk.toString()).slice(-4000),
        ),
      );
    if (this.options.output === 'files') {
      mkdirSync(this.logDir, { recursive: true });
      const file = createWriteStream(join(this.logDir, `${app}.log`), { flags: 'a' });
      child.stdout?.pipe(file, { end: false });
      child.stderr?.pipe(file, { end: false });
      const closed = new Promise<void>((resolve) => file.once('close', () => resolve()));
      this.logEnds.set(app, () => {
        file.end();
        return closed;
      });
      return;
    }
    const prefix = `[${app}]`.padEnd(18);
    for (const stream of [child.stdout, child.stderr]) {
      let pending = '';
      stream?.on('data', (chunk: Buffer) => {
        const lines = (pending + chunk.toString()).split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) process.stdout.write(`${prefix} ${line}\n`);
      });
    }
  }

  private async waitReady(
    app: AppName,
    name: string,
    child: ChildProcess,
    httpUrl: string,
  ): Promise<void> {
    // Once its output is read to the end ('close', or 2 s after the exit if a process it
    // started holds its pipes), the error quotes its last lines.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) => {
        void Promise.race([closed, delay(2000)]).then(() => {
          const tail = (this.outputTails.get(name) ?? '').split('\n').slice(-25).join('\n');
          const status = signal ?? code;
          reject(new Error(`${name} exited (${status}) while starting; it wrote last:\n${tail}`));
        });
      }),
    );
    exited.catch(() => undefined);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const service = SERVICE_OF[app];
    const probe = service ? this.servicePinger(service) : null;
    try {
      while (Date.now() < deadline) {
        const ready = probe
          ? await probe.ping()
          : app === 'local-daemon'
            ? await daemonAnswers(httpUrl)
            : await gatewayAnswers(httpUrl);
        if (ready) return;
        await Promise.race([exited, delay(200)]);
      }
      throw new Error(`${name} did not become ready within ${READY_TIMEOUT_MS / 1000} s`);
    } finally {
      await probe?.close();
    }
  }

  /** The RABBITMQ_URL of an app of this stack: the broker, with the app's own login. */
  brokerUrl(app: CloudAppName): string {
    return this.brokerUrls[app];
  }

  /**
   * An untyped client of one service's queue on this stack's broker, for messages no
   * declaration allows, sending as `as` (the gateway unless told); close() it when done.
   */
  rawClient(
    service: ServiceName,
    timeoutMs: number,
    as: CloudAppName = 'api-gateway',
  ): ServiceClient {
    return ServiceClient.connect(
      loadLauncherEnv({ ...process.env, ...this.env, RABBITMQ_URL: this.brokerUrls[as] }),
      service,
      timeoutMs,
    );
  }

  private servicePinger(service: ServiceName): {
    ping(): Promise<boolean>;
    close(): Promise<void>;
  } {
    const client = this.rawClient(service, 1000);
    return {
      ping: () =>
        client.send(HEALTH_PING, { requestId: `stack-${this.id}` }, {}).then(
          () => true,
          () => false,
        ),
      close: () => client.close(),
    };
  }
}
