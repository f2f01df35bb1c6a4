import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const WORKSPACE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Where the image keeps DATA_DIR (deploy/Dockerfile's volume). */
export const IMAGE_DATA_DIR = '/var/lib/pgcloud';
/** The uid and gid the image's apps run as. */
const IMAGE_UID = 10001;

/** How a Stack runs its apps as containers of the pgcloud image instead of node processes. */
export interface ContainerImage {
  /** The image, such as `pgcloud:test` (built from deploy/Dockerfile). */
  image: string;
  /** The docker client command (default `docker`). */
  docker?: string;
}

// Settings that name paths of this machine: the image has its own.
const HOST_PATH_SETTINGS = new Set(['DATA_DIR', 'PG_BIN_DIR', 'PG_OS_USER', 'PITR_SPOOL_DIR']);

/** Every setting .env.example names: what an app may read from its environment. */
function settingNames(): Set<string> {
  const text = readFileSync(join(WORKSPACE_ROOT, '.env.example'), 'utf8');
  return new Set([...text.matchAll(/^(?:# ?)?([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]));
}

/** A docker client that answers, or undefined: the one on PATH, else Debian's. */
export function answeringDocker(): string | undefined {
  return ['docker', '/usr/bin/docker'].find(
    (docker) => spawnSync(docker, ['info'], { stdio: 'ignore', timeout: 20_000 }).status === 0,
  );
}

/** The container of a stack's app instance (`name`: the app, or a replica's name). */
export function containerName(stackId: string, name: string): string {
  return `pgcloud-${stackId}-${name}`;
}

/**
 * The `docker run` command line of one app instance of a stack: on the host's network (it
 * reaches the servers on loopback, and its ports are the host's), a read-only root
 * filesystem with a fresh /tmp, and a folder of its own under the stack's data folder
 * (made here, owned by the image's user) as its DATA_DIR. The settings are this process's
 * (those .env.example names) under the stack's and the app's; they travel in the client's
 * environment (`-e NAME`), never in its arguments, so no secret shows in a process list.
 */
export function containerRun(
  image: ContainerImage,
  run: {
    app: string;
    name: string;
    stackId: string;
    dataDir: string;
    /** The stack's and the app's settings. */
    settings: Record<string, string>;
  },
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const hostDataDir = join(run.dataDir, run.name);
  mkdirSync(hostDataDir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() === 0) chownSync(hostDataDir, IMAGE_UID, IMAGE_UID);
  else chmodSync(hostDataDir, 0o777);
  const names = settingNames();
  const inherited = Object.entries(process.env).filter(([name]) => names.has(name));
  const settings: Record<string, string> = {};
  for (const [name, value] of [...inherited, ...Object.entries(run.settings)])
    if (value !== undefined && !HOST_PATH_SETTINGS.has(name)) settings[name] = value;
  Object.assign(settings, { APP: run.app, DATA_DIR: IMAGE_DATA_DIR });
  const args = [
    'run',
    '--rm',
    '--name',
    containerName(run.stackId, run.name),
    '--label',
    `pgcloud.stack=${run.stackId}`,
    '--network',
    'host',
    '--read-only',
    '--tmpfs',
    '/tmp',
    '--volume',
    `${hostDataDir}:${IMAGE_DATA_DIR}`,
    ...Object.keys(settings).flatMap((name) => ['--env', name]),
    image.image,
  ];
  return { command: image.docker ?? 'docker', args, env: { ...process.env, ...settings } };
}

/** Stops a container (SIGTERM, SIGKILL after `seconds`), or kills it at once. */
export async function stopContainer(
  image: ContainerImage,
  stackId: string,
  name: string,
  signal: NodeJS.Signals,
  seconds = 10,
): Promise<void> {
  const container = containerName(stackId, name);
  const args =
    signal === 'SIGKILL' ? ['kill', container] : ['stop', '--time', String(seconds), container];
  await promisify(execFile)(image.docker ?? 'docker', args).catch(() => undefined); // gone
}

/** Removes every container of a stack, running or not (its label names the stack). */
export async function removeStackContainers(image: ContainerImage, stackId: string): Promise<void> {
  const docker = image.docker ?? 'docker';
  const { stdout } = await promisify(execFile)(docker, [
    'ps',
    '--all',
    '--quiet',
    '--filter',
    `label=pgcloud.stack=${stackId}`,
  ]);
  const ids = stdout.split('\n').filter(Boolean);
  if (ids.length > 0) await promisify(execFile)(docker, ['rm', '--force', ...ids]);
}
