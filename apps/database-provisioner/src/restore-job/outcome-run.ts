import { writeFile } from 'node:fs/promises';
import type { JobEnv } from './job-env.js';
import { readJobEnv } from './job-env.js';
import { failureLine } from './outcome-line.js';

/** What a command's work is handed: its environment, SIGTERM's signal, where secrets go. */
export interface OutcomeWork {
  env: JobEnv;
  signal: AbortSignal;
  /** Names what no outcome or log line may hold, as soon as the work knows it. */
  secret: (...values: string[]) => void;
}

/**
 * The frame of a Job command whose outcome is one line of JSON at RESTORE_OUTCOME_PATH (the
 * container's termination message): SIGTERM aborts the work's signal; a failure is written
 * as failureLine, without the secrets the work named. Answers the exit code: 0 when the
 * work answered its line, 1 when it threw or the line could not be written.
 */
export async function runWithOutcome(
  processEnv: NodeJS.ProcessEnv,
  what: string,
  work: (context: OutcomeWork) => Promise<string>,
): Promise<number> {
  const outcomePath = processEnv['RESTORE_OUTCOME_PATH'];
  if (!outcomePath) {
    process.stderr.write('RESTORE_OUTCOME_PATH is not set\n');
    return 1;
  }
  const stopped = new AbortController();
  const onTerm = () => stopped.abort(new Error(`the ${what} was stopped (SIGTERM)`));
  process.once('SIGTERM', onTerm);
  const secrets: string[] = [];
  let line: string;
  let done = false;
  try {
    const env = readJobEnv(processEnv);
    line = await work({
      env,
      signal: stopped.signal,
      secret: (...values) => secrets.push(...values),
    });
    done = true;
  } catch (err) {
    line = failureLine(err, secrets);
    process.stderr.write(`${what} failed: ${line}`);
  } finally {
    process.off('SIGTERM', onTerm);
  }
  try {
    await writeFile(outcomePath, line);
  } catch (err) {
    process.stderr.write(`the outcome could not be written: ${(err as Error).message}\n`);
    return 1;
  }
  return done ? 0 : 1;
}
