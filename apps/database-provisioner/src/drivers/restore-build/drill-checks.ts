import { readFile } from 'node:fs/promises';
import type { DrillCheck } from '@pgcloud/contracts';
import type { PgTools, SocketAddress } from '@pgcloud/postgres';
import {
  CommandError,
  SUPERUSER,
  parseLsn,
  parseSegmentName,
  runPgTool,
  segmentOf,
  withSuperuser,
} from '@pgcloud/postgres';
import type { RestoreRecovery, RestoreSegment } from '../database-driver.js';
import { BrokenWalError, CorruptArchiveError } from '../database-driver.js';
import type { RestoreBuildStep } from '../database-driver.js';
import { recordedMd5 } from './segment-fetch.js';

// pg_amcheck's exit status when it found corruption (1 is any other failure).
const AMCHECK_CORRUPTION = 2;
// A large database takes long to check; a hung check must not hold the drill forever.
const AMCHECK_TIMEOUT_MS = 6 * 3600_000;
const SQL_TIMEOUT_MS = 10_000;
// How much of pg_amcheck's report a check's detail keeps.
const DETAIL_MAX_CHARS = 1000;
/** The line PostgreSQL logs when recovery stops at its target (time, position or name). */
const STOPPED_AT_TARGET = /recovery stopping (?:before|after|at) .*$/m;

/**
 * `wal_chain`, before anything is fetched: the plan's segments follow one another without
 * a gap, on one timeline. Answers what breaks the chain; undefined when nothing does. The
 * bytes of each segment are checked as they come down (wal-spool.ts).
 */
export function walChainProblem(segments: readonly RestoreSegment[]): string | undefined {
  if (segments.length === 0) return 'the plan names no WAL segment to replay';
  let previous: { timeline: number; segno: bigint; name: string } | undefined;
  for (const segment of segments) {
    const parsed = parseSegmentName(segment.name);
    if (!parsed) return `${segment.name} is not a WAL segment's name`;
    if (previous && parsed.timeline !== previous.timeline)
      return `${segment.name} is on timeline ${parsed.timeline}, ${previous.name} on ${previous.timeline}`;
    if (previous && parsed.segno !== previous.segno + 1n)
      return `the archive has no segment between ${previous.name} and ${segment.name}`;
    previous = { ...parsed, name: segment.name };
  }
  return undefined;
}

/** `wal_chain` once replay went through every planned segment, each checked as it came. */
export function walChainPassed(segments: readonly RestoreSegment[]): DrillCheck {
  const first = segments[0]?.name ?? '';
  const last = segments.at(-1)?.name ?? '';
  const checked = segments
    .flatMap((s) => s.etags ?? [])
    .filter((etag) => recordedMd5(etag) !== undefined).length;
  return {
    name: 'wal_chain',
    passed: true,
    detail:
      `${segments.length} segments from ${first} to ${last} on one timeline, none missing; ` +
      `sizes as archived, ${checked} objects' MD5 as the archive recorded them`,
  };
}

/** `consistent`: the checking server recovered, was promoted and took a TLS login. */
export function consistentPassed(databaseName: string): DrillCheck {
  return {
    name: 'consistent',
    passed: true,
    detail: `recovery reached a consistent state and ended; a TLS login as ${databaseName} worked`,
  };
}

/**
 * `target_reached` (PITR): recovery stopped at its target, as the server logged; or the
 * archive held no commit past a time target and replay went through to the last planned
 * segment. Answers the check and where replay ended.
 */
export async function targetReached(
  address: SocketAddress,
  logFile: string,
  recovery: RestoreRecovery,
): Promise<{ check: DrillCheck; replayEnd: string | undefined }> {
  const replayEnd = await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
    const { rows } = await client.query<{ lsn: string | null }>(
      'SELECT pg_last_wal_replay_lsn()::text AS lsn',
    );
    return rows[0]?.lsn ?? undefined;
  });
  const log = await readFile(logFile, 'utf8').catch(() => '');
  const stopped = STOPPED_AT_TARGET.exec(log)?.[0];
  const check = (passed: boolean, detail: string) => ({
    check: { name: 'target_reached' as const, passed, detail },
    replayEnd,
  });
  if (stopped)
    return check(true, `${stopped} (replay ended at ${replayEnd ?? 'an unknown position'})`);
  const lastPlanned = parseSegmentName(recovery.segments.at(-1)?.name ?? '')?.segno;
  if (replayEnd === undefined || lastPlanned === undefined)
    return check(false, 'replay did not say where it ended');
  if (segmentOf(parseLsn(replayEnd)) >= lastPlanned)
    return check(
      true,
      `the archive holds no commit past the target: replay went through the planned WAL to ${replayEnd}`,
    );
  return check(
    false,
    `replay ended at ${replayEnd}, before the last planned segment ${recovery.segments.at(-1)?.name ?? ''}`,
  );
}

/**
 * `amcheck`: pg_amcheck on every database of the checking server, tables (heap) and B-tree
 * indexes, installing the amcheck extension where it is missing (the scratch data is
 * thrown away after).
 */
export async function amcheck(tools: PgTools, address: SocketAddress): Promise<DrillCheck> {
  const args = [
    ...['--host', address.socketDir, '--port', String(address.port)],
    ...['--username', SUPERUSER, '--no-password', '--all', '--install-missing'],
  ];
  try {
    await runPgTool(tools.binDir, 'pg_amcheck', args, {
      osUser: tools.osUser,
      timeoutMs: AMCHECK_TIMEOUT_MS,
      ...(tools.signal ? { signal: tools.signal } : {}),
    });
    return {
      name: 'amcheck',
      passed: true,
      detail: 'pg_amcheck checked every database, tables and B-tree indexes: no corruption',
    };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    // Its report of corruption names relations and blocks; its other words (a connection
    // that failed) name this host's paths, and stay out of the detail.
    if (err.exitCode === AMCHECK_CORRUPTION) {
      const report = err.output.stdout.trim().slice(0, DETAIL_MAX_CHARS);
      return { name: 'amcheck', passed: false, detail: `pg_amcheck found corruption: ${report}` };
    }
    return {
      name: 'amcheck',
      passed: false,
      detail: `pg_amcheck could not check the restored server (exit ${String(err.exitCode)})`,
    };
  }
}

/**
 * The check a failed drill build failed: a WAL segment missing or changed (`wal_chain`), or
 * a restore that could not be made (`consistent`): the base backup not the one archived,
 * or recovery that did not end in a server taking a login. Undefined for a failure that
 * says nothing of the backup (a download cut off before it was verified): the job retries.
 */
export function failedCheck(
  err: unknown,
  step: RestoreBuildStep,
  checks: readonly DrillCheck[],
): DrillCheck | undefined {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof BrokenWalError) return { name: 'wal_chain', passed: false, detail: message };
  if (err instanceof CorruptArchiveError)
    return {
      name: 'consistent',
      passed: false,
      detail: `the base backup is not the one archived: ${message}`,
    };
  // The tools' own words name this host's paths: they stay in the log (the caller's).
  if (step !== 'download' && !checks.some((check) => check.name === 'consistent'))
    return {
      name: 'consistent',
      passed: false,
      detail: `recovery did not end in a server taking a login (in the ${step} step)`,
    };
  return undefined;
}
