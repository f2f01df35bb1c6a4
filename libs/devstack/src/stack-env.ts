import { resolve } from 'node:path';
import { freePort, WORKSPACE_ROOT } from '@pgcloud/testing';
import { isolatedEnv } from './isolated-resources.js';
import type { LauncherEnv } from './launcher-env.js';
import type { StackOptions } from './stack.js';

/**
 * The settings every app of a stack gets: an isolated stack's own database, queues and
 * ports, or `npm run up`'s configured ones, and the daemon's and the gateway's addresses.
 */
export async function stackEnv(
  launcher: LauncherEnv,
  options: Required<StackOptions>,
  id: string,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    ...(options.isolated
      ? isolatedEnv(launcher, id)
      : {
          DATABASE_URL: launcher.DATABASE_URL,
          RMQ_QUEUE_PREFIX: launcher.RMQ_QUEUE_PREFIX,
          RABBITMQ_URL: launcher.RABBITMQ_URL,
        }),
    ...options.env,
  };
  if (options.apps.includes('local-daemon')) {
    env['DAEMON_PORT'] ??= String(launcher.DAEMON_PORT);
    // In a stack the daemon keeps its server with the stack's other data, which
    // PostgreSQL's OS user reaches already, rather than under a home folder it may not.
    env['DAEMON_DATA_DIR'] ??=
      launcher.DAEMON_DATA_DIR ??
      resolve(WORKSPACE_ROOT, env['DATA_DIR'] ?? launcher.DATA_DIR, 'daemon');
  }
  env['GATEWAY_PORT'] ??= String(options.isolated ? await freePort() : launcher.GATEWAY_PORT);
  env['PUBLIC_BASE_URL'] ??=
    (options.isolated ? undefined : launcher.PUBLIC_BASE_URL) ??
    `http://127.0.0.1:${env['GATEWAY_PORT']}`;
  return env;
}
