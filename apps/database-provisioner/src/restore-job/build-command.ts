import { access, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { OsUser, PgTools } from '@pgcloud/postgres';
import { ensureOwnedDir, resolveOsUser } from '@pgcloud/postgres';
import { pgCtl } from '../drivers/restore-build/pg-ctl.js';
import { buildRestoredData } from '../drivers/restore-build/restored-data.js';
import type { JobEnv, JobPaths } from './job-env.js';
import { jobPaths } from './job-env.js';
import { neutralizeData, writeServerConfig } from './job-server-config.js';
import { installTls } from './job-tls.js';
import { successLine } from './outcome-line.js';
import { runWithOutcome } from './outcome-run.js';
import type { RestoreInput } from './restore-input.js';
import { INPUT_FILES, readRestoreInput } from './restore-input.js';

/** The TLS check connects by this name: the Secret's certificate carries it. */
const CHECK_HOST = 'localhost';
const CHECK_ADDRESS = '127.0.0.1';

/**
 * `build`: the restored data in RESTORE_DIR/data, built and checked as the local driver
 * builds its own (restore-build/), its outcome written to RESTORE_OUTCOME_PATH as one line
 * of JSON. Answers the exit code: 0 built, 1 failed. SIGTERM stops the build (and the
 * checking server).
 */
export function runBuild(env: NodeJS.ProcessEnv): Promise<number> {
  return runWithOutcome(env, 'restore build', async ({ env: jobEnv, signal, secret }) => {
    const input = await readRestoreInput(jobEnv.inputDir);
    secret(...secretsOf(input));
    return successLine(await build(jobEnv, input, signal));
  });
}

async function build(env: JobEnv, input: RestoreInput, signal: AbortSignal) {
  const osUser = await resolveOsUser(env.osUserName);
  const paths = jobPaths(env.restoreDir);
  // As root (tests), RESTORE_DIR is given to the OS user; a pod's emptyDir is open to all.
  if (osUser.switchUser) await ensureOwnedDir(env.restoreDir, osUser);
  await installTls(env.inputDir, paths, osUser);
  const caPem = await readFile(join(env.inputDir, INPUT_FILES.ca), 'utf8');
  const files = await writeServerConfig('check', paths, osUser);
  const serverSettings = { config_file: files.configFile, hba_file: files.hbaFile };
  const tools: PgTools = { binDir: env.binDir, osUser, signal };
  try {
    return await buildRestoredData(
      paths,
      {
        ...input,
        signal,
        progress: {
          step: (step) => process.stdout.write(`restore build: ${step}\n`),
          downloaded: () => undefined,
        },
      },
      {
        tools,
        listenAddress: CHECK_ADDRESS,
        host: CHECK_HOST,
        caPem,
        serverSettings,
        configure: (dataDir) => neutralizeData(dataDir, osUser),
        seal: () => rm(paths.socketDir, { recursive: true, force: true }),
      },
    );
  } finally {
    await stopCheckingServer(paths, env.binDir, osUser);
    await rm(paths.socketDir, { recursive: true, force: true });
  }
}

/** A checking server a failure (or SIGTERM) left running goes: nothing outlives the build. */
export async function stopCheckingServer(
  paths: JobPaths,
  binDir: string,
  osUser: OsUser,
): Promise<void> {
  const running = await access(join(paths.dataDir, 'postmaster.pid')).then(
    () => true,
    () => false,
  );
  if (!running) return;
  await pgCtl({ binDir, osUser }, paths.dataDir, 'stop', ['-m', 'immediate', '-t', '60']).catch(
    () => undefined,
  );
}

/** What no outcome or log line may hold: the pre-signed links and the passwords. */
export function secretsOf(input: Partial<RestoreInput> & Pick<RestoreInput, 'archive'>): string[] {
  return [
    input.archive.url,
    ...(input.recovery?.segments.flatMap((segment) => segment.urls) ?? []),
    input.password ?? '',
    input.replicationPassword ?? '',
  ];
}
