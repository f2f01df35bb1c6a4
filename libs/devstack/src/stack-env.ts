import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { encryptionKeyOf, ensureSecretFile } from '@pgcloud/config';
import { freePort, WORKSPACE_ROOT } from '@pgcloud/testing';
import { isolatedEnv } from './isolated-resources.js';
import type { LauncherEnv } from './launcher-env.js';
import type { StackOptions } from './stack.js';

/**
 * The settings every app of a stack gets: an isolated stack's own database, queues and
 * ports, or `npm run up`'s configured ones, the daemon's and the gateway's addresses, and
 * the encryption key unless one is configured.
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
  const dataDir = resolve(WORKSPACE_ROOT, env['DATA_DIR'] ?? launcher.DATA_DIR);
  if (!configured('ENCRYPTION_KEY', env)) env['ENCRYPTION_KEY'] = await stackEncryptionKey(dataDir);
  if (options.apps.includes('local-daemon')) {
    env['DAEMON_PORT'] ??= String(launcher.DAEMON_PORT);
    // In a stack the daemon keeps its server with the stack's other data, which
    // PostgreSQL's OS user reaches already, rather than under a home folder it may not.
    env['DAEMON_DATA_DIR'] ??= launcher.DAEMON_DATA_DIR ?? join(dataDir, 'daemon');
  }
  env['GATEWAY_PORT'] ??= String(options.isolated ? await freePort() : launcher.GATEWAY_PORT);
  env['PUBLIC_BASE_URL'] ??=
    (options.isolated ? undefined : launcher.PUBLIC_BASE_URL) ??
    `http://127.0.0.1:${env['GATEWAY_PORT']}`;
  return env;
}

/** True when the stack's settings or this process's environment give `name`, or its file. */
function configured(name: string, env: Record<string, string>): boolean {
  return [name, `${name}_FILE`].some((setting) => Boolean(env[setting] ?? process.env[setting]));
}

/**
 * The stack's ENCRYPTION_KEY, which notification-service requires: the key the provisioner
 * makes for itself when none is set (DATA_DIR/keys/encryption.key, made here first when
 * missing), so both apps share one key, kept with the stack's data, and what `npm run up`
 * sealed opens after a restart.
 */
async function stackEncryptionKey(dataDir: string): Promise<string> {
  // DATA_DIR itself stays open to PostgreSQL's OS user; only keys/ is closed (0700).
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const text = await ensureSecretFile(join(dataDir, 'keys', 'encryption.key'), {
    prefix: '',
    setting: 'ENCRYPTION_KEY',
  });
  return encryptionKeyOf(text).toString('base64');
}
