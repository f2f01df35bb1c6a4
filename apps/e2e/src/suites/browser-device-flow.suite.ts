import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { DeviceAuthorization, UserProfile } from '@pgcloud/contracts';
import type { ApiClient, ApiResponse } from '@pgcloud/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { expectData, expectError } from '../support/assertions.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';
import type { TokenAnswer } from '../support/device-flow.js';
import { poll, sleep, startDevice } from '../support/device-flow.js';

// Debian's chromium, which .ci/run installs; Playwright never downloads a browser here.
const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
// No sandbox because tests run as root; the rest keeps Chromium from calling outside hosts.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
// How long the CLI side waits for the person's answer before the test gives up: generous,
// as Chromium opening, typing into and posting the page may be slow on a busy machine.
const POLL_DEADLINE_MS = 60_000;

/**
 * Polls as the CLI does while the person is at the browser: every interval (longer after
 * slow_down) until the answer is no longer pending, which it returns.
 */
async function pollUntilAnswered(
  api: ApiClient,
  device: DeviceAuthorization,
): Promise<ApiResponse<unknown>> {
  let interval = device.interval;
  const deadline = Date.now() + POLL_DEADLINE_MS;
  while (Date.now() < deadline) {
    await sleep(interval * 1000 + 100);
    const answer = await poll(api, device.device_code);
    const data = answer.status === 200 ? expectData<TokenAnswer>(answer, 200) : undefined;
    if (data?.status === 'slow_down') interval = data.interval ?? interval;
    else if (data?.status !== 'pending') return answer;
  }
  throw new Error(`no answer for the device within ${POLL_DEADLINE_MS / 1000} s`);
}

async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: install Debian's chromium (.ci/run does) or set CHROMIUM_PATH`,
    );
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

/** Types into a field key by key, as a person does, rather than pasting the value. */
async function typeInto(page: Page, label: string, text: string): Promise<void> {
  await page.getByLabel(label, { exact: true }).pressSequentially(text);
}

/** Clicks a button of the form and answers the status of the page the post returned. */
async function submit(page: Page, button: 'Approve' | 'Deny'): Promise<number> {
  const [response] = await Promise.all([
    page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/device',
    ),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  await page.waitForLoadState();
  return response.status();
}

/** Saves a screenshot beside the apps' logs, for a person to look at after a run. */
async function screenshot(page: Page, name: string): Promise<void> {
  const { logDir } = await sharedStack();
  await page.screenshot({ path: join(logDir, `browser-device-${name}.png`), fullPage: true });
}

/** A code of the right shape that is not this device's: its first letter changed. */
function wrongCodeFor(userCode: string): string {
  return `${userCode.startsWith('B') ? 'C' : 'B'}${userCode.slice(1)}`;
}

describe('device flow sign-in in a browser (headless Chromium)', () => {
  let browser: Browser;
  let context: BrowserContext;

  before(async () => {
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
  });

  beforeEach(async () => {
    // A context of its own per test: no cookies or cache carried between them.
    context = await browser.newContext();
    // The browser's requests come from 127.0.0.1, whose request bucket is small in the
    // shared stack: the favicon Chromium asks for on its own is not worth one of them.
    await context.route('**/favicon.ico', (route) => route.abort());
  });

  afterEach(async () => {
    await context?.close();
  });

  async function openForm(device: DeviceAuthorization): Promise<Page> {
    const page = await context.newPage();
    const response = await page.goto(device.verification_uri);
    assert.equal(response?.status(), 200);
    await page.getByRole('heading', { name: 'Sign in to pgcloud' }).waitFor();
    return page;
  }

  it('approves a code typed by hand; the polling client gets a token for that login', async () => {
    const api = await newClient();
    const login = uniqueLogin('browser');
    const device = await startDevice(api);
    // The CLI polls while the person is at the browser, as it would for real.
    const answered = pollUntilAnswered(api, device);
    // Awaited below; this keeps it from being an unhandled rejection should the page fail first.
    answered.catch(() => undefined);

    const page = await openForm(device);
    // As read off a terminal: lowercase, without the dash (compared case-insensitively).
    await typeInto(page, 'Code', device.user_code.replace('-', '').toLowerCase());
    await typeInto(page, 'Login', login);
    await screenshot(page, 'form');
    assert.equal(await submit(page, 'Approve'), 200);
    await page.getByRole('heading', { name: 'Device approved' }).waitFor();
    assert.match(await page.locator('body').innerText(), /You can close this page/);
    assert.equal(await page.locator('strong').innerText(), login);
    await screenshot(page, 'approved');

    const token = expectData<TokenAnswer>(await answered, 200);
    assert.match(token.access_token ?? '', /^pgc_/);
    assert.equal(token.user?.login, login);
    const me = expectData<UserProfile>(
      await api.withToken(token.access_token).get('/auth/me'),
      200,
    );
    assert.equal(me.login, login);
    assert.equal(me.id, token.user?.id);
  });

  it('shows a clear error for a wrong code and leaves the device pending', async () => {
    const api = await newClient();
    const login = uniqueLogin('typo');
    const device = await startDevice(api);
    assert.deepEqual(expectData(await poll(api, device.device_code), 200), { status: 'pending' });

    const page = await openForm(device);
    await typeInto(page, 'Code', wrongCodeFor(device.user_code));
    await typeInto(page, 'Login', login);
    assert.equal(await submit(page, 'Approve'), 400);
    const alert = page.getByRole('alert');
    assert.equal(
      await alert.innerText(),
      'That code is not valid. Check the code your terminal shows.',
    );
    assert.ok(await alert.isVisible());
    // The form comes back filled in, so the person only fixes the code.
    assert.equal(await page.getByLabel('Login', { exact: true }).inputValue(), login);
    await screenshot(page, 'wrong-code');

    await sleep(device.interval * 1000 + 100);
    assert.deepEqual(expectData(await poll(api, device.device_code), 200), { status: 'pending' });
  });

  it('denies: the polling client is refused with ACCESS_DENIED', async () => {
    const api = await newClient();
    const device = await startDevice(api);

    const page = await openForm(device);
    await typeInto(page, 'Code', device.user_code);
    await typeInto(page, 'Login', uniqueLogin('deny'));
    assert.equal(await submit(page, 'Deny'), 200);
    await page.getByRole('heading', { name: 'Request denied' }).waitFor();
    assert.match(await page.locator('body').innerText(), /Nothing was signed in/);

    expectError(await poll(api, device.device_code), 403, 'ACCESS_DENIED');
  });
});
