import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeviceToken } from '@pgcloud/api-client';
import {
  getCurrentUser,
  logout,
  pollDeviceToken,
  startDeviceFlow,
  unwrap,
} from '@pgcloud/api-client';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderFields } from '../output.js';
import { credentialsPath, removeFile, writePrivateJsonFile } from '../settings-files.js';

/** `login`, `logout`, `whoami`. */
export function registerAuthCommands(program: Command): void {
  withCommonOptions(
    program
      .command('login')
      .description('Sign in with the device flow and save the token (mode 0600)')
      .option('--no-browser', 'only print the address and code; never open a browser'),
  ).action(runs(login));

  withCommonOptions(
    program
      .command('logout')
      .description('Revoke the saved token and forget it')
      .option('--all', 'revoke every token of your account: each sign-in and API key'),
  ).action(
    runs(async (ctx) => {
      const all = (ctx.options as { all?: boolean }).all === true;
      const path = credentialsPath(ctx.env);
      let answer;
      try {
        answer = await unwrap(
          logout({ client: ctx.api(), ...(all ? { query: { all: 'true' } } : {}) }),
        );
      } finally {
        // The token is forgotten even when the API refused it (already revoked or expired).
        if (!ctx.env['PGCLOUD_TOKEN']) removeFile(path);
      }
      ctx.out.result(answer, () =>
        all ? `Signed out: ${answer.count} token(s) of your account revoked.` : 'Signed out.',
      );
    }),
  );

  withCommonOptions(program.command('whoami').description('Show the signed-in user')).action(
    runs(async (ctx) => {
      const user = await unwrap(getCurrentUser({ client: ctx.api() }));
      ctx.out.result(
        user,
        () =>
          renderFields([
            ['login', user.login],
            ['email', user.email],
            ['user id', user.id],
            ['api', ctx.apiUrl],
          ]),
        () => user.login,
      );
    }),
  );
}

async function login(ctx: CliContext): Promise<void> {
  const client = ctx.publicApi();
  const started = await unwrap(startDeviceFlow({ client }));
  assertSafeToOpen(started.verification_uri);
  const page = `${started.verification_uri}?user_code=${encodeURIComponent(started.user_code)}`;
  // The code is for the person, whatever the output mode: always on stderr.
  process.stderr.write(
    `To sign in, open ${started.verification_uri} and enter the code ${started.user_code}\n`,
  );
  if ((ctx.options as { browser?: boolean }).browser !== false && openBrowser(page, ctx.env))
    process.stderr.write('(a browser window was opened at that page)\n');
  process.stderr.write('Waiting for you to approve ...\n');

  const deadline = Date.now() + started.expires_in * 1000;
  let interval = started.interval;
  let token: DeviceToken | undefined;
  while (!token) {
    if (Date.now() >= deadline)
      throw new CliError(
        EXIT.auth,
        'DEVICE_CODE_EXPIRED',
        'the code expired: run `pgcloud login` again',
      );
    await sleep(interval * 1000);
    const answer = await unwrap(
      pollDeviceToken({ client, body: { device_code: started.device_code } }),
    );
    if ('access_token' in answer) token = answer;
    else if (answer.status === 'slow_down') interval = answer.interval;
  }

  writePrivateJsonFile(credentialsPath(ctx.env), {
    api_url: ctx.apiUrl,
    token: token.access_token,
    login: token.user.login,
    email: token.user.email,
    saved_at: new Date().toISOString(),
  });
  // The token is the one thing never printed: it stays in the file.
  ctx.out.result(
    token.user,
    () => `Signed in to ${ctx.apiUrl} as ${token.user.login} (${token.user.email}).`,
    () => token.user.login,
  );
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The verification address comes from the API: only an `https:` page, or `http:` on this
 * machine, is shown and opened. Anything else (`javascript:`, `file:`, plain http to
 * another host) is refused before it reaches a browser or the terminal.
 */
export function assertSafeToOpen(uri: string): void {
  let url: URL | undefined;
  try {
    url = new URL(uri);
  } catch {
    url = undefined;
  }
  const safe =
    url !== undefined &&
    (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)));
  if (!safe)
    throw new CliError(
      EXIT.error,
      'UNSAFE_VERIFICATION_URI',
      'the API answered a verification address that is neither https: nor http: on this ' +
        'machine; not opening it. Check --api-url or PGCLOUD_API_URL.',
    );
}

/** Opens the page in the desktop's browser when there is a desktop; false otherwise. */
function openBrowser(url: string, env: NodeJS.ProcessEnv): boolean {
  if (!process.stderr.isTTY) return false;
  const opener =
    process.platform === 'darwin'
      ? 'open'
      : process.platform === 'win32'
        ? undefined
        : env['DISPLAY'] || env['WAYLAND_DISPLAY']
          ? 'xdg-open'
          : undefined;
  if (!opener) return false;
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}
