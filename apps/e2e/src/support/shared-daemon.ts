import type { ApiClient } from '@pgcloud/testing';
import { LocalDaemon } from '@pgcloud/testing';

let started: Promise<LocalDaemon> | undefined;

/** The embedded-server daemon the daemon suites share, started on first use. */
export function sharedDaemon(): Promise<LocalDaemon> {
  started ??= LocalDaemon.start('shared', { LOG_LEVEL: 'debug' });
  return started;
}

/** A client of the shared daemon that sends its token. */
export async function daemonApi(): Promise<ApiClient> {
  return (await sharedDaemon()).api();
}

/** Stops the shared daemon and its server, when one was started, and removes its files. */
export async function stopSharedDaemon(): Promise<void> {
  if (started) await (await started).stop();
}
