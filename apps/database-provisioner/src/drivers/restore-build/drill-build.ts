import { randomBytes } from 'node:crypto';
import type { DrillCheck } from '@pgcloud/contracts';
import type { PgTools } from '@pgcloud/postgres';
import type { JobPaths } from '../../restore-job/job-env.js';
import { neutralizeData, writeServerConfig } from '../../restore-job/job-server-config.js';
import type {
  DrillOutcome,
  DrillSpec,
  RestoreBuildProgress,
  RestoreBuildStep,
} from '../database-driver.js';
import {
  amcheck,
  consistentPassed,
  failedCheck,
  targetReached,
  walChainPassed,
  walChainProblem,
} from './drill-checks.js';
import { buildRestoredData } from './restored-data.js';

/** The scratch server's TLS check connects by this name: its certificate carries it. */
const CHECK_HOST = 'localhost';
const CHECK_ADDRESS = '127.0.0.1';

/** What a drill's build is given besides its spec. */
export interface DrillBuildContext {
  /** With the drill's signal: it stops the build and the tools. */
  tools: PgTools;
  /** The CA that issued the certificate in `paths.tlsDir`, for the TLS login check. */
  caPem: string;
  progress?: RestoreBuildProgress;
}

/**
 * A restore drill's build (docs/api/drills.md): the restore a Job builds (restore-build/,
 * with the Job's own settings: a server on the loopback and a 0700 socket, its login's
 * password made here and thrown away), checked while it runs. Answers the checks, passed
 * or not; throws only for a failure that says nothing of the backup (the job retries it).
 * The caller removes `paths` afterwards, whatever happened.
 */
export async function drillBuild(
  paths: JobPaths,
  spec: Omit<DrillSpec, 'serverId'>,
  context: DrillBuildContext,
): Promise<DrillOutcome> {
  const segments = spec.recovery?.segments;
  const broken = segments && walChainProblem(segments);
  if (broken) return failed([{ name: 'wal_chain', passed: false, detail: broken }], 0);
  const { tools } = context;
  const files = await writeServerConfig('check', paths, tools.osUser);
  const checks: DrillCheck[] = [];
  const startedAt = performance.now();
  let restoreSeconds = 0;
  let replayEnd: string | undefined;
  let step: RestoreBuildStep = 'download';
  try {
    const outcome = await buildRestoredData(
      paths,
      {
        restoreId: spec.drillId,
        archive: spec.archive,
        ...(spec.recovery ? { recovery: spec.recovery } : {}),
        archivedDatabaseName: spec.archivedDatabaseName,
        databaseName: spec.archivedDatabaseName,
        // Nobody but this check ever has them: the scratch server takes no other login.
        password: randomBytes(24).toString('base64url'),
        replicationPassword: randomBytes(24).toString('base64url'),
        ...(tools.signal ? { signal: tools.signal } : {}),
        progress: {
          step: (next) => {
            step = next;
            context.progress?.step(next);
          },
          downloaded: (bytes) => context.progress?.downloaded(bytes),
          replayed: (count) => context.progress?.replayed?.(count),
        },
      },
      {
        tools,
        listenAddress: CHECK_ADDRESS,
        host: CHECK_HOST,
        caPem: context.caPem,
        serverSettings: { config_file: files.configFile, hba_file: files.hbaFile },
        configure: (dataDir) => neutralizeData(dataDir, tools.osUser),
        inspect: async (address) => {
          restoreSeconds = (performance.now() - startedAt) / 1000;
          checks.push(consistentPassed(spec.archivedDatabaseName));
          if (spec.recovery) {
            const reached = await targetReached(address, paths.logFile, spec.recovery);
            replayEnd = reached.replayEnd;
            checks.push(reached.check);
          }
          checks.push(await amcheck(tools, address));
        },
      },
    );
    if (segments) checks.push(walChainPassed(segments));
    return {
      checks,
      restoreSeconds,
      walFilesApplied: outcome.walFilesApplied,
      ...(replayEnd ? { replayEnd } : {}),
    };
  } catch (err) {
    tools.signal?.throwIfAborted();
    const check = failedCheck(err, step, checks);
    if (!check) throw err;
    const cause = err instanceof Error ? err.message : String(err);
    return { ...failed([...checks, check], restoreSeconds), cause };
  }
}

function failed(checks: DrillCheck[], restoreSeconds: number): DrillOutcome {
  return { checks, restoreSeconds, walFilesApplied: 0 };
}
