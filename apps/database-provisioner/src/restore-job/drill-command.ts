import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureOwnedDir, resolveOsUser } from '@pgcloud/postgres';
import { drillBuild } from '../drivers/restore-build/drill-build.js';
import { secretsOf, stopCheckingServer } from './build-command.js';
import { jobPaths } from './job-env.js';
import { installTls } from './job-tls.js';
import { drillLine } from './outcome-line.js';
import { runWithOutcome } from './outcome-run.js';
import { INPUT_FILES, readDrillInput } from './restore-input.js';

/**
 * `drill`: a restore drill (docs/api/drills.md) in RESTORE_DIR, built as `build` builds a
 * restore, checked, and removed; its checks written to RESTORE_OUTCOME_PATH as one line of
 * JSON. Answers the exit code: 0 when the drill ran (whatever its checks found), 1 when it
 * could not. SIGTERM stops it.
 */
export function runDrill(env: NodeJS.ProcessEnv): Promise<number> {
  return runWithOutcome(env, 'restore drill', async ({ env: jobEnv, signal, secret }) => {
    const input = await readDrillInput(jobEnv.inputDir);
    secret(...secretsOf(input));
    const osUser = await resolveOsUser(jobEnv.osUserName);
    const paths = jobPaths(jobEnv.restoreDir);
    if (osUser.switchUser) await ensureOwnedDir(jobEnv.restoreDir, osUser);
    try {
      await installTls(jobEnv.inputDir, paths, osUser);
      const caPem = await readFile(join(jobEnv.inputDir, INPUT_FILES.ca), 'utf8');
      const outcome = await drillBuild(paths, input, {
        tools: { binDir: jobEnv.binDir, osUser, signal },
        caPem,
        progress: {
          step: (step) => process.stdout.write(`restore drill: ${step}\n`),
          downloaded: () => undefined,
        },
      });
      return drillLine(outcome, secretsOf(input));
    } finally {
      // The scratch server and its data go with the drill, not only with the pod.
      await stopCheckingServer(paths, jobEnv.binDir, osUser);
      for (const dir of [paths.dataDir, paths.walSpoolDir, paths.socketDir])
        await rm(dir, { recursive: true, force: true });
    }
  });
}
