import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Project, Webhook, WebhookDeliveryList, WebhookWithSecret } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import type { SignedIn } from '@pgcloud/testing';
import { eventually, rememberSecret, signIn } from '@pgcloud/testing';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { expectData, expectError } from '../support/assertions.js';
import { runningDatabase } from '../support/databases.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';
import type { Received } from '../support/webhook-receiver.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Webhooks (docs/api/webhooks.md) delivered to a receiver written here, verified by the
 * Standard Webhooks library from npm rather than by pgcloud's own code: signed, retried,
 * kept across a kill -9 of notification-service, refused for private targets.
 */
describe('webhooks: signed deliveries of a project’s events', () => {
  let stack: Stack;
  let owner: SignedIn;
  let project: Project;
  let receiver: WebhookReceiver;
  let dir: string;
  let endpoint: WebhookWithSecret;
  const database = 'hooked';
  const dbPath = () => `/projects/${project.id}/databases/${database}`;
  const hooksPath = () => `/projects/${project.id}/webhooks`;

  /** Runs notification-service again with the receiver's CA trusted and short retries. */
  async function restartNotifications(allowPrivate: boolean, signal?: NodeJS.Signals) {
    await stack.stopApp('notification-service', signal);
    await stack.startApp('notification-service', {
      env: {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: String(allowPrivate),
        WEBHOOK_CA_FILE: receiver.ca.certPath,
        WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s',
        WEBHOOK_DELIVERY_LEASE_SECONDS: '3',
        WEBHOOK_POLL_MS: '100',
      },
    });
  }

  /** A new event for the endpoint: the database's password is rotated. */
  async function rotate(): Promise<void> {
    expectData(await owner.api.post(`${dbPath()}/credentials/rotate`), 200);
  }

  function verify(request: Received, secret = endpoint.secret): { type: string; data: unknown } {
    return new StandardWebhook(secret).verify(request.body, request.headers) as {
      type: string;
      data: unknown;
    };
  }

  before(async () => {
    stack = await sharedStack();
    dir = await mkdtemp(join(tmpdir(), 'pgcloud-webhooks-'));
    receiver = await WebhookReceiver.start(dir);
    await restartNotifications(true);
    owner = await signIn(await newClient(), uniqueLogin('webhooks'));
    project = expectData<Project>(await owner.api.post('/projects', { name: 'hooked' }), 201);
  });

  after(async () => {
    await receiver?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers an event the Standard Webhooks library verifies, the secret shown once', async () => {
    endpoint = expectData<WebhookWithSecret>(
      await owner.api.post(hooksPath(), {
        url: receiver.url(),
        events: ['database.running', 'database.credentials_rotated'],
        description: 'the test receiver',
      }),
      201,
    );
    rememberSecret(endpoint.secret);
    assert.match(endpoint.id, /^whk_[0-9a-z]{20}$/);
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(endpoint.enabled, true);
    const listed = expectData<{ webhooks: Webhook[] }>(await owner.api.get(hooksPath()), 200);
    assert.deepEqual(
      listed.webhooks.map((hook) => hook.id),
      [endpoint.id],
    );
    assert.ok(!JSON.stringify(listed).includes(endpoint.secret), 'no secret in the list');

    const { database: made } = await runningDatabase(owner.api, project.id, database);
    const [running] = await receiver.waitFor('database.running');
    assert.ok(running);
    const event = verify(running);
    assert.equal(event.type, 'database.running');
    assert.equal((event.data as { database_id?: string }).database_id, made.id);
    assert.match(running.headers['webhook-id'] ?? '', /^msg_[0-9a-z]{20}$/);
    assert.ok(!running.body.includes('postgres://'), 'no connection string in the body');

    await eventually(async () => {
      const { deliveries } = expectData<WebhookDeliveryList>(
        await owner.api.get(`${hooksPath()}/${endpoint.id}/deliveries`),
        200,
      );
      assert.equal(deliveries[0]?.event_id, running.headers['webhook-id']);
      assert.equal(deliveries[0]?.status_code, 204);
      assert.equal(deliveries[0]?.attempt, 1);
    });
  });

  it('is refused by the library when replayed more than 5 minutes later, or changed', () => {
    const [delivered] = receiver.ofType('database.running');
    assert.ok(delivered);
    const realNow = Date.now;
    Date.now = () => realNow() + 6 * 60_000;
    try {
      assert.throws(() => verify(delivered), /timestamp/i);
    } finally {
      Date.now = realNow;
    }
    assert.throws(() =>
      verify({ ...delivered, body: delivered.body.replace('running', 'failed') }),
    );
    assert.throws(() => verify(delivered, `whsec_${Buffer.alloc(32, 7).toString('base64')}`));
  });

  it('gets an event to a receiver that answered 500 three times on the 4th attempt', async () => {
    const failuresLeft = new Map<string, number>();
    receiver.reply = (request) => {
      const id = request.headers['webhook-id'] ?? '';
      const left = failuresLeft.get(id) ?? 3;
      failuresLeft.set(id, left - 1);
      return { status: left > 0 ? 500 : 200 };
    };
    try {
      await rotate();
      const attempts = await receiver.waitFor('database.credentials_rotated', 4);
      const ids = new Set(attempts.map((request) => request.headers['webhook-id']));
      assert.equal(ids.size, 1, 'every attempt carries the one webhook-id');
      for (const attempt of attempts) verify(attempt);
      await eventually(async () => {
        const { deliveries } = expectData<WebhookDeliveryList>(
          await owner.api.get(`${hooksPath()}/${endpoint.id}/deliveries`),
          200,
        );
        const ofEvent = deliveries.filter((delivery) => ids.has(delivery.event_id));
        assert.deepEqual(
          ofEvent.map((delivery) => [delivery.attempt, delivery.status_code]),
          [
            [4, 200],
            [3, 500],
            [2, 500],
            [1, 500],
          ],
        );
        assert.ok(ofEvent[1]?.next_attempt_at, 'a failed attempt says when the next one is');
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(receiver.ofType('database.credentials_rotated').length, 4, 'no 5th attempt');
    } finally {
      receiver.reply = () => ({ status: 204 });
    }
  });

  it('signs with the old and the new secret while a rotation overlaps', async () => {
    const rotated = expectData<WebhookWithSecret>(
      await owner.api.post(`${hooksPath()}/${endpoint.id}/rotate-secret`),
      200,
    );
    rememberSecret(rotated.secret);
    assert.notEqual(rotated.secret, endpoint.secret);
    const before = receiver.ofType('database.credentials_rotated').length;
    await rotate();
    const requests = await receiver.waitFor('database.credentials_rotated', before + 1);
    const latest = requests.at(-1);
    assert.ok(latest);
    assert.equal((latest.headers['webhook-signature'] ?? '').split(' ').length, 2);
    verify(latest, endpoint.secret);
    verify(latest, rotated.secret);
    endpoint = rotated;
  });

  it('loses no event when notification-service is killed mid-delivery', async () => {
    let release: (status: number) => void = () => undefined;
    const held = new Promise<number>((resolve) => (release = resolve));
    receiver.reply = () => ({ hold: held });
    const before = receiver.ofType('database.credentials_rotated').length;
    try {
      await rotate();
      const [inFlight] = (await receiver.waitFor('database.credentials_rotated', before + 1)).slice(
        before,
      );
      assert.ok(inFlight);
      // Killed while the receiver holds the request open: the attempt never ends.
      await stack.stopApp('notification-service', 'SIGKILL');
      release(0);
      receiver.reply = () => ({ status: 204 });
      // An event while the service is down waits in its queue.
      await rotate();
      await restartNotifications(true);
      const all = await receiver.waitFor('database.credentials_rotated', before + 3, 45_000);
      const ids = all.slice(before).map((request) => request.headers['webhook-id']);
      assert.ok(
        ids.filter((id) => id === inFlight.headers['webhook-id']).length >= 2,
        'the killed attempt is made again',
      );
      assert.equal(new Set(ids).size, 2, 'both events came');
    } finally {
      release(0);
      receiver.reply = () => ({ status: 204 });
    }
  });

  it('refuses targets on loopback or link-local addresses without the development setting', async () => {
    const other = expectData<Project>(await owner.api.post('/projects', { name: 'private' }), 201);
    const otherHooks = `/projects/${other.id}/webhooks`;
    await restartNotifications(false);
    try {
      expectError(
        await owner.api.post(otherHooks, { url: 'http://example.com/hooks', events: ['*'] }),
        400,
        'VALIDATION_ERROR',
      );
      const byName = expectData<Webhook>(
        await owner.api.post(otherHooks, {
          url: receiver.url('/hooks', 'localhost'),
          events: ['*'],
        }),
        201,
      );
      const metadataAddress = expectData<Webhook>(
        await owner.api.post(otherHooks, {
          url: 'https://169.254.169.254/latest/meta-data',
          events: ['*'],
        }),
        201,
      );
      const before = receiver.received.length;
      await runningDatabase(owner.api, other.id, 'private');
      for (const hook of [byName, metadataAddress]) {
        await eventually(async () => {
          const { deliveries } = expectData<WebhookDeliveryList>(
            await owner.api.get(`${otherHooks}/${hook.id}/deliveries`),
            200,
          );
          assert.ok(deliveries[0], `an attempt to ${hook.url}`);
          assert.equal(deliveries[0].status_code, undefined);
          assert.match(
            deliveries[0].error ?? '',
            /refused|not allowed|private|loopback|link-local/i,
          );
        });
      }
      assert.equal(receiver.received.length, before, 'nothing reached the receiver');
    } finally {
      await restartNotifications(true);
    }
  });

  it('keeps endpoints to the tier’s quota and to their own project', async () => {
    const second = expectData<Webhook>(
      await owner.api.post(hooksPath(), { url: receiver.url('/second'), events: ['*'] }),
      201,
    );
    expectError(
      await owner.api.post(hooksPath(), { url: receiver.url('/third'), events: ['*'] }),
      403,
      'QUOTA_EXCEEDED',
    );
    expectError(
      await owner.api.post(hooksPath(), { url: receiver.url(), events: ['database.exploded'] }),
      400,
      'VALIDATION_ERROR',
    );
    const stranger = await signIn(await newClient(), uniqueLogin('webhooks-stranger'));
    expectError(await stranger.api.get(`${hooksPath()}/${endpoint.id}`), 404, 'PROJECT_NOT_FOUND');
    expectError(await owner.api.get(`${hooksPath()}/whk_nothing`), 404, 'WEBHOOK_NOT_FOUND');
    const paused = expectData<Webhook>(
      await owner.api.patch(`${hooksPath()}/${second.id}`, { enabled: false }),
      200,
    );
    assert.equal(paused.enabled, false);
    expectData(await owner.api.delete(`${hooksPath()}/${second.id}`), 200);
    expectError(await owner.api.get(`${hooksPath()}/${second.id}`), 404, 'WEBHOOK_NOT_FOUND');
  });
});
