import { ApiClient } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';

/**
 * Settings of the stack every suite shares. The gateway trusts X-Forwarded-For so each
 * test can act as a client of its own address; a poll interval of 1 s keeps the device
 * flow quick. Buckets are roomy here so suites can make many requests; the default
 * limits are tested on a stack of their own (rate-limits.suite.ts).
 */
export const SHARED_STACK_ENV = {
  TRUST_PROXY: '1',
  DEVICE_POLL_INTERVAL_SECONDS: '1',
  RATE_LIMIT_FREE_PER_MINUTE: '60000',
  RATE_LIMIT_FREE_BURST: '1000',
  RATE_LIMIT_IP_PER_MINUTE: '600',
  RATE_LIMIT_IP_BURST: '30',
  LOG_LEVEL: 'debug',
  // Short, so a test can watch a download link expire.
  DOWNLOAD_URL_TTL_SECONDS: '5',
  // A restore's numbers fresh enough to be seen while a download of a few hundred MB lasts.
  RESTORE_PROGRESS_INTERVAL_MS: '100',
  // No automated backup of a test's database at a moment of the schedule's choosing (a
  // restore to `latest` would start from it); the schedule has a suite and a stack of its
  // own (backup-schedule).
  BACKUP_CHECK_INTERVAL_SECONDS: '3600',
  // A token's last use shows in the token list within a second or two.
  TOKEN_USAGE_FLUSH_SECONDS: '1',
  // No automated drill of a test's database while a suite works on it: drills are asked
  // for by the suites that test them.
  DRILL_SCHEDULE_SECONDS: '3600',
  // A database that expires is gone within a second or two of its time.
  DATABASE_EXPIRY_SWEEP_SECONDS: '1',
};

/**
 * For suites that start a stack of their own (they kill or reconfigure its apps): a quick
 * device flow, roomy Free buckets and no automated drills, plus the suite's own settings.
 */
export function ownStack(env: Record<string, string>): Promise<Stack> {
  return Stack.start({
    env: {
      DEVICE_POLL_INTERVAL_SECONDS: '1',
      RATE_LIMIT_FREE_BURST: '1000',
      RATE_LIMIT_FREE_PER_MINUTE: '60000',
      DRILL_SCHEDULE_SECONDS: '3600',
      ...env,
    },
  });
}

let started: Promise<Stack> | undefined;

/** The stack of this test run, started on first use. */
export function sharedStack(): Promise<Stack> {
  started ??= Stack.start({ env: SHARED_STACK_ENV });
  return started;
}

/** The shared stack when a suite of this process started it, else undefined. */
export function startedSharedStack(): Promise<Stack> | undefined {
  return started;
}

/** Stops the shared stack, when one was started. */
export async function stopSharedStack(): Promise<void> {
  if (started) await (await started).stop();
}

let clientCounter = 0;

/** An anonymous API client with a client address no other test uses. */
export async function newClient(): Promise<ApiClient> {
  const stack = await sharedStack();
  clientCounter += 1;
  return new ApiClient(stack.baseUrl, undefined, `198.51.100.${clientCounter % 250}`);
}

let loginCounter = 0;

/** A login no other test uses. */
export function uniqueLogin(base: string): string {
  loginCounter += 1;
  return `${base}-${process.pid}-${loginCounter}`;
}
