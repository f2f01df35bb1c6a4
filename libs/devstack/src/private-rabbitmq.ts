import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canConnect, freePort, WORKSPACE_ROOT } from '@pgcloud/testing';
import { newRunId } from './isolated-resources.js';
import { ensureBrokerLogins, runWithInput } from './broker-logins.js';

// Debian keeps the real scripts here; /usr/sbin's wrappers would switch to the rabbitmq user.
const DEBIAN_SCRIPTS = '/usr/lib/rabbitmq/bin';
const START_TIMEOUT_MS = 90_000;

/**
 * A RabbitMQ node of a test's own, on its own ports and directories under .data/, so an
 * outage test can stop and start a broker without touching the machine's shared one.
 */
export class PrivateRabbitMq {
  private constructor(
    private readonly dir: string,
    private readonly env: Record<string, string>,
    readonly port: number,
  ) {}

  /**
   * Makes the node's directories and starts it with each app's login (broker-logins.ts);
   * `config` lines are added to its rabbitmq.conf (`load_definitions = FILE` for a broker
   * with users of its own, and then no app logins).
   */
  static async start(options: { config?: string[] } = {}): Promise<PrivateRabbitMq> {
    const id = newRunId();
    const dir = join(WORKSPACE_ROOT, '.data', 'rabbitmq', id);
    const [port, distPort] = [await freePort(), await freePort()];
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
    writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
    const config = [`listeners.tcp.local = 127.0.0.1:${port}`, ...(options.config ?? [])];
    writeFileSync(join(dir, 'rabbitmq.conf'), `${config.join('\n')}\n`);
    const env = {
      HOME: dir, // the Erlang cookie lives here, shared by the node and rabbitmqctl
      RABBITMQ_NODENAME: `pgcloud-${id}@localhost`,
      RABBITMQ_NODE_PORT: String(port),
      RABBITMQ_DIST_PORT: String(distPort),
      RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: join(dir, 'log'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
      RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
      RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
      RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'),
      ERL_EPMD_ADDRESS: '127.0.0.1',
    };
    const broker = new PrivateRabbitMq(dir, env, port);
    await broker.resume();
    if (!options.config?.some((line) => line.startsWith('load_definitions')))
      await ensureBrokerLogins(broker.url, (args, input) => broker.ctl(args, input));
    return broker;
  }

  /** The AMQP URL of this node. */
  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  /** Starts the node again (its durable queues survive) and waits for AMQP. */
  async resume(): Promise<void> {
    const child = spawn(script('rabbitmq-server'), ['-detached'], {
      env: { ...process.env, ...this.env },
      stdio: 'ignore',
    });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', () => resolve());
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await canConnect('127.0.0.1', this.port, 500))) {
      if (Date.now() > deadline) throw new Error(`private RabbitMQ did not listen on ${this.port}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Runs rabbitmqctl against this node, `input` on its standard input. */
  async ctl(args: string[], input?: string): Promise<void> {
    await runWithInput(
      script('rabbitmqctl'),
      ['-n', this.env['RABBITMQ_NODENAME'] ?? '', ...args],
      {
        env: { ...process.env, ...this.env },
        input,
      },
    );
  }

  /** Stops the node as an outage would: every connection drops. */
  async halt(): Promise<void> {
    await this.ctl(['stop']);
    while (await canConnect('127.0.0.1', this.port, 500)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Stops the node and removes its directories. */
  async destroy(): Promise<void> {
    if (await canConnect('127.0.0.1', this.port, 500)) await this.halt();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function script(name: string): string {
  return existsSync(join(DEBIAN_SCRIPTS, name)) ? join(DEBIAN_SCRIPTS, name) : name;
}
