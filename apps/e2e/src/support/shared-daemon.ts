import type { ApiClient } from '@pgcloud/testing';
import { LocalDaemon } from '@pgcloud/devstack';

let started: Promise<LocalDaemon> | undefined;

/** The shared daemon's HTTP_HEADERS_TIMEOUT_MS, shortened from 10 s. */
export const DAEMON_HEADERS_TIMEOUT_MS = 1500;

/** The embedded-server daemon the daemon suites share, started on first use. */
export function sharedDaemon(): Promise<LocalDaemon> {
  started ??= LocalDaemon.start('shared', {
    LOG_LEVEL: 'debug',
    HTTP_HEADERS_TIMEOUT_MS: String(DAEMON_HEADERS_TIMEOUT_MS),
  });
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
