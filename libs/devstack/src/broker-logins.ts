import { execFile } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { AppName } from '@pgcloud/contracts';
import { APP_NAMES } from '@pgcloud/contracts';
import amqp from 'amqplib';

// The stack runs each app under a broker login of its own, named after the app, on the
// broker it is given, as every deployment does: services answer a message only from the
// apps its pattern allows (docs/operating.md#between-the-services). The passwords are made once
// per user of the machine and kept outside any checkout (~/.cache/pgcloud): the logins are
// the broker's, so every checkout's stacks must use the same ones, or a second checkout's
// run (a fresh clone's CI beside a working copy) would change them under the first.

const PASSWORDS_DIR = join(homedir(), '.cache', 'pgcloud');
const PASSWORDS_FILE = join(PASSWORDS_DIR, 'broker-logins.json');
const IMPORT_TIMEOUT_MS = 20_000;

/** Runs rabbitmqctl with these arguments, `input` on its standard input, against a broker. */
export type RabbitmqCtl = (args: string[], input?: string) => Promise<void>;

/** Runs `command` with `input` on its standard input; fails with its output if it fails. */
export async function runWithInput(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<void> {
  const running = promisify(execFile)(command, args, { env: options.env ?? process.env });
  running.child.stdin?.end(options.input ?? '');
  await running;
}

/** This machine's broker, as `rabbitmqctl` reaches it. */
const machineCtl: RabbitmqCtl = async (args, input) => {
  await runWithInput('rabbitmqctl', args, { input }).catch((err: unknown) => {
    throw new Error(
      `could not make the apps' broker logins with rabbitmqctl ${args[0]}: ${String(err)}\n` +
        `Run the stack as a user rabbitmqctl works for, or create the logins ${APP_NAMES.join(', ')} ` +
        `with the passwords in ${PASSWORDS_FILE}.`,
    );
  });
};

/**
 * Each app's password on the local broker: made at the first call, then read back. An app
 * added since the file was written gets a password derived from the others (so every
 * process that finds it missing derives the same one), written back beside them.
 */
export function brokerPasswords(): Record<AppName, string> {
  let stored: Partial<Record<AppName, string>>;
  try {
    stored = JSON.parse(readFileSync(PASSWORDS_FILE, 'utf8')) as Partial<Record<AppName, string>>;
  } catch {
    const made = Object.fromEntries(APP_NAMES.map((app) => [app, randomBytes(18).toString('hex')]));
    mkdirSync(PASSWORDS_DIR, { recursive: true, mode: 0o700 });
    // Written aside, then linked into place: of two processes starting at once, one file wins.
    const aside = `${PASSWORDS_FILE}.${process.pid}`;
    writeFileSync(aside, JSON.stringify(made), { mode: 0o600 });
    try {
      linkSync(aside, PASSWORDS_FILE);
    } catch {
      // The other process's file is there: use it.
    } finally {
      rmSync(aside, { force: true });
    }
    return JSON.parse(readFileSync(PASSWORDS_FILE, 'utf8')) as Record<AppName, string>;
  }
  const missing = APP_NAMES.filter((app) => !stored[app]);
  if (missing.length === 0) return stored as Record<AppName, string>;
  const known = Object.entries(stored)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, password]) => password)
    .join(':');
  for (const app of missing)
    stored[app] = createHmac('sha256', known).update(app).digest('hex').slice(0, 36);
  // Written aside, then renamed into place: whoever writes last writes the same passwords.
  const aside = `${PASSWORDS_FILE}.${process.pid}`;
  writeFileSync(aside, JSON.stringify(stored), { mode: 0o600 });
  renameSync(aside, PASSWORDS_FILE);
  return stored as Record<AppName, string>;
}

/** `url` with `app`'s login and password in place of its own. */
export function brokerUrlOf(url: string, app: AppName): string {
  const signed = new URL(url);
  signed.username = app;
  signed.password = brokerPasswords()[app];
  return signed.href;
}

/**
 * Makes sure every app's login signs in to the broker of `url` with its password, creating
 * or updating the logins in one import when one does not, and answers each app's URL.
 * Their rights are the broker's widest on the URL's virtual host: on one machine the
 * services' own checks are what keeps apps apart.
 */
export async function ensureBrokerLogins(
  url: string,
  ctl: RabbitmqCtl = machineCtl,
): Promise<Record<AppName, string>> {
  const urls = Object.fromEntries(APP_NAMES.map((app) => [app, brokerUrlOf(url, app)])) as Record<
    AppName,
    string
  >;
  const works = await Promise.all(Object.values(urls).map(signsIn));
  if (works.every(Boolean)) return urls;
  const path = new URL(url).pathname;
  const vhost = path === '' || path === '/' ? '/' : decodeURIComponent(path.slice(1));
  const passwords = brokerPasswords();
  const definitions = {
    users: APP_NAMES.map((app) => ({
      name: app,
      password_hash: rabbitPasswordHash(passwords[app]),
      hashing_algorithm: 'rabbit_password_hashing_sha256',
      tags: [],
    })),
    permissions: APP_NAMES.map((user) => ({
      user,
      vhost,
      configure: '.*',
      write: '.*',
      read: '.*',
    })),
  };
  // On standard input: the broker's tool may run as another OS user, who cannot read ours.
  await ctl(['import_definitions', '--format', 'json'], JSON.stringify(definitions));
  // The broker imports in the background: wait until every login signs in.
  const deadline = Date.now() + IMPORT_TIMEOUT_MS;
  while (!(await Promise.all(Object.values(urls).map(signsIn))).every(Boolean)) {
    if (Date.now() > deadline)
      throw new Error(`the broker logins did not work ${IMPORT_TIMEOUT_MS / 1000} s after import`);
    await delay(100);
  }
  return urls;
}

async function signsIn(url: string): Promise<boolean> {
  try {
    const connection = await amqp.connect(url);
    await connection.close();
    return true;
  } catch {
    return false;
  }
}

/** RabbitMQ's rabbit_password_hashing_sha256: a 4-byte salt, then SHA-256(salt + password). */
function rabbitPasswordHash(password: string): string {
  const salt = randomBytes(4);
  const digest = createHash('sha256').update(salt).update(password, 'utf8').digest();
  return Buffer.concat([salt, digest]).toString('base64');
}
