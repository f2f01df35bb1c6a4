import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WORKSPACE_ROOT } from '@pgcloud/testing';
import { answeringDocker } from '@pgcloud/devstack';

/** The image the container suite builds and runs. */
export const TEST_IMAGE = 'pgcloud:test';
/** The Debian base `npm test` makes with mmdebstrap (tools/container-engine.mjs). */
export const BASE_IMAGE = 'pgcloud-base:bookworm';
// Certificate authorities added to this machine (Debian's place for local ones): a build
// behind a TLS-inspecting proxy needs them to fetch Node.js and the npm packages.
const LOCAL_CAS = '/usr/local/share/ca-certificates';

/** The docker client of the engine `npm test` started; throws, saying how, when none answers. */
export function dockerClient(): string {
  const docker = answeringDocker();
  if (!docker)
    throw new Error(
      'no Docker engine answers: `npm test` installs and starts one (tools/container-engine.mjs)',
    );
  return docker;
}

/**
 * The client that builds and how: with BuildKit, which builds the stages in parallel (a
 * client with buildx, or one older than 23 whose own BuildKit DOCKER_BUILDKIT=1 turns
 * on), else with the classic builder.
 */
function builder(docker: string): { docker: string; env: NodeJS.ProcessEnv } {
  for (const candidate of [docker, '/usr/bin/docker']) {
    const buildx = spawnSync(candidate, ['buildx', 'version'], { stdio: 'ignore' }).status === 0;
    const { stdout } = spawnSync(candidate, ['version', '--format', '{{.Client.Version}}'], {
      encoding: 'utf8',
    });
    if (buildx || Number.parseInt(stdout ?? '', 10) < 23)
      return { docker: candidate, env: { ...process.env, DOCKER_BUILDKIT: '1' } };
  }
  return { docker, env: { ...process.env, DOCKER_BUILDKIT: '0' } };
}

function run(
  { docker, env }: { docker: string; env: NodeJS.ProcessEnv },
  args: string[],
  logFile: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    const child = spawn(docker, args, {
      cwd: WORKSPACE_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once('error', reject);
    child.once('close', (code) => {
      log.end();
      if (code === 0) resolve();
      else reject(new Error(`docker ${args[0]} exited with ${code}; see ${logFile}`));
    });
  });
}

/**
 * Builds TEST_IMAGE from deploy/Dockerfile on the local base, its output in a log file;
 * the engine's layer cache makes a rebuild of unchanged sources quick.
 */
export async function buildTestImage(docker: string): Promise<void> {
  const logDir = join(WORKSPACE_ROOT, '.data', 'logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'image-build.log');
  const cas = existsSync(LOCAL_CAS)
    ? readdirSync(LOCAL_CAS)
        .filter((name) => name.endsWith('.crt'))
        .map((name) => readFileSync(join(LOCAL_CAS, name), 'utf8'))
        .join('\n')
    : '';
  await run(
    builder(docker),
    [
      'build',
      // No stopped containers left behind when a step fails (the classic builder keeps them).
      '--force-rm',
      '--progress=plain',
      '--network',
      'host',
      '--build-arg',
      `BASE_IMAGE=${BASE_IMAGE}`,
      '--build-arg',
      `EXTRA_CA_CERTS=${cas}`,
      '--file',
      'deploy/Dockerfile',
      '--tag',
      TEST_IMAGE,
      '.',
    ],
    logFile,
  );
}

/** The lines of an app's log that are JSON objects, parsed; throws on any other line. */
export function jsonLines(log: string, app: string): Record<string, unknown>[] {
  return log
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`${app} logged a line that is not JSON: ${line.slice(0, 200)}`);
      }
    });
}
