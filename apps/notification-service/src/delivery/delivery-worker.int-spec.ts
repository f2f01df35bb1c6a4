import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { Received } from './delivery.int-fixtures.js';
import { DeliveryTestDatabase, Receiver, waitFor } from './delivery.int-fixtures.js';

/** The signature a receiver computes, by the Standard Webhooks rule, with node:crypto. */
function expectedSignature(secret: string, request: Received): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`;
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}

describe('the delivery worker, against a receiver on loopback', () => {
  const db = new DeliveryTestDatabase();
  let receiver: Receiver;

  before(async () => {
    await db.create();
    receiver = await Receiver.start();
  });

  afterEach(async () => {
    await db.stopWorkers();
    receiver.reply = () => 200;
  });

  after(async () => {
    await receiver?.stop();
    await db.drop();
  });

  it('delivers an event once, signed, with the Standard Webhooks headers', async () => {
    const endpoint = await db.endpoint(receiver.url('/signed'));
    const message = await db.event(endpoint, 'db_signed');
    const sentAfter = Math.floor(Date.now() / 1000);
    db.startWorker();
    await waitFor('the delivery', () => receiver.at('/signed').length === 1);
    const [request] = receiver.at('/signed');
    assert.ok(request);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['webhook-id'], message.id);
    assert.match(message.id, /^msg_[0-9a-z]{20}$/);
    const timestamp = Number(request.headers['webhook-timestamp']);
    assert.ok(timestamp >= sentAfter && timestamp <= Date.now() / 1000, 'the attempt’s time');
    assert.equal(request.body, message.body);
    assert.equal(request.headers['webhook-signature'], expectedSignature(endpoint.secret, request));
    const verified = new StandardWebhook(endpoint.secret).verify(request.body, request.headers);
    assert.deepEqual((verified as { data: unknown }).data, {
      project_id: endpoint.projectId,
      database_id: 'db_signed',
    });
    await waitFor(
      'the attempt recorded',
      async () => (await db.deliveries(endpoint.id)).length > 0,
    );
    assert.deepEqual(await db.deliveries(endpoint.id), [
      { message_id: message.id, attempt: 1, status_code: 200, error: null, next_attempt_at: null },
    ]);
    await sleep(300);
    assert.equal(receiver.at('/signed').length, 1, 'delivered once');
  });

  it('retries a receiver that answered 500 twice and delivers on the 3rd attempt', async () => {
    const endpoint = await db.endpoint(receiver.url('/flaky'));
    const message = await db.event(endpoint, 'db_flaky');
    receiver.reply = () => (receiver.at('/flaky').length <= 2 ? 500 : 204);
    db.startWorker({ WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s' });
    await waitFor('three attempts', () => receiver.at('/flaky').length === 3);
    const attempts = receiver.at('/flaky');
    assert.deepEqual(
      attempts.map((request) => request.headers['webhook-id']),
      [message.id, message.id, message.id],
      'one webhook-id on every attempt',
    );
    for (const [before, next] of [attempts.slice(0, 2), attempts.slice(1, 3)] as Received[][])
      assert.ok(next && before && next.at - before.at >= 900, 'the schedule’s 1 s between them');
    for (const request of attempts)
      assert.equal(
        request.headers['webhook-signature'],
        expectedSignature(endpoint.secret, request),
      );
    await waitFor(
      'the 3rd attempt recorded',
      async () => (await db.deliveries(endpoint.id)).length === 3,
    );
    const recorded = await db.deliveries(endpoint.id);
    assert.deepEqual(
      recorded.map((row) => [row.attempt, row.status_code, row.next_attempt_at !== null]),
      [
        [1, 500, true],
        [2, 500, true],
        [3, 204, false],
      ],
    );
    const [row] = await db.sql<{ status: string }>(
      'SELECT status FROM notifications.messages WHERE id = $1',
      [message.id],
    );
    assert.equal(row?.status, 'delivered');
  });

  it('takes a message again once the lease of a replica that died with it lapses', async () => {
    const endpoint = await db.endpoint(receiver.url('/lease'));
    const message = await db.event(endpoint, 'db_lease');
    // As a replica killed mid-attempt leaves it: claimed, its lease 1.5 s from now.
    await db.sql(
      `UPDATE notifications.messages
          SET attempts = 1, claim = 'dead-replica:1', next_attempt_at = now() + interval '1.5 s'
        WHERE id = $1`,
      [message.id],
    );
    const startedAt = Date.now();
    db.startWorker();
    await sleep(800);
    assert.equal(receiver.at('/lease').length, 0, 'not taken while the lease holds');
    await waitFor('the delivery', () => receiver.at('/lease').length === 1);
    assert.ok(Date.now() - startedAt >= 1200);
    assert.equal(receiver.at('/lease')[0]?.headers['webhook-id'], message.id);
    await waitFor(
      'the attempt recorded',
      async () => (await db.deliveries(endpoint.id)).length > 0,
    );
    const [recorded] = await db.deliveries(endpoint.id);
    assert.deepEqual([recorded?.attempt, recorded?.status_code], [2, 200]);
  });

  it('renews the lease of an attempt that runs longer than it: no other replica takes it', async () => {
    const endpoint = await db.endpoint(receiver.url('/slow'));
    await db.event(endpoint, 'db_slow');
    receiver.reply = async () => {
      await sleep(3000);
      return 200;
    };
    // Two replicas with a 2 s lease; the receiver answers after 3 s.
    db.startWorker({ WEBHOOK_DELIVERY_LEASE_SECONDS: '2' });
    db.startWorker({ WEBHOOK_DELIVERY_LEASE_SECONDS: '2' });
    await waitFor(
      'the attempt recorded',
      async () => (await db.deliveries(endpoint.id)).length > 0,
    );
    assert.equal(receiver.at('/slow').length, 1, 'sent once');
    assert.deepEqual(
      (await db.deliveries(endpoint.id)).map((row) => [row.attempt, row.status_code]),
      [[1, 200]],
    );
  });

  it('keeps the order of one database’s events, and lets another database’s go ahead', async () => {
    const endpoint = await db.endpoint(receiver.url('/order'));
    const first = await db.event(endpoint, 'db_one');
    const second = await db.event(endpoint, 'db_one');
    const other = await db.event(endpoint, 'db_two');
    let firstFailures = 2;
    receiver.reply = (request) =>
      request.headers['webhook-id'] === first.id && firstFailures-- > 0 ? 500 : 200;
    db.startWorker({ WEBHOOK_RETRY_SCHEDULE: '1s,1s' });
    await waitFor('five requests', () => receiver.at('/order').length === 5);
    const ids = receiver.at('/order').map((request) => request.headers['webhook-id']);
    assert.deepEqual(ids.slice(-2), [first.id, second.id], 'the second waited for the first');
    assert.ok(ids.indexOf(other.id) < ids.lastIndexOf(first.id), 'the other database went ahead');
  });

  it('lets a waiting event go ahead after WEBHOOK_ORDER_WAIT', async () => {
    const endpoint = await db.endpoint(receiver.url('/order-wait'));
    const stuck = await db.event(endpoint, 'db_stuck');
    const later = await db.event(endpoint, 'db_stuck');
    receiver.reply = (request) => (request.headers['webhook-id'] === stuck.id ? 500 : 200);
    const startedAt = Date.now();
    db.startWorker({ WEBHOOK_ORDER_WAIT: '2s' });
    await waitFor('the later event', () =>
      receiver.at('/order-wait').some((request) => request.headers['webhook-id'] === later.id),
    );
    assert.ok(Date.now() - startedAt >= 1500, 'it waited for the stuck one first');
    const [row] = await db.sql<{ status: string }>(
      'SELECT status FROM notifications.messages WHERE id = $1',
      [stuck.id],
    );
    assert.equal(row?.status, 'pending', 'the stuck one is still being retried');
  });

  it('disables an endpoint whose deliveries all failed for WEBHOOK_DISABLE_AFTER', async () => {
    const endpoint = await db.endpoint(receiver.url('/down'));
    await db.event(endpoint, 'db_down');
    const waiting = await db.event(endpoint, 'db_down');
    receiver.reply = () => 503;
    db.startWorker({ WEBHOOK_DISABLE_AFTER: '2s' });
    await waitFor('the endpoint disabled', async () => {
      const [row] = await db.sql<{ enabled: boolean }>(
        'SELECT enabled FROM notifications.endpoints WHERE id = $1',
        [endpoint.id],
      );
      return row?.enabled === false;
    });
    const [row] = await db.sql<{ disabled_reason: string }>(
      'SELECT disabled_reason FROM notifications.endpoints WHERE id = $1',
      [endpoint.id],
    );
    assert.equal(row?.disabled_reason, 'every delivery failed for 2 seconds (last: HTTP 503)');
    const pending = await db.sql(
      'SELECT id FROM notifications.messages WHERE status = $1 AND endpoint_id = $2',
      ['pending', endpoint.id],
    );
    assert.deepEqual(pending, [], 'nothing waits for a disabled endpoint');
    const count = receiver.at('/down').length;
    const made = await db.dataSource.transaction((manager) =>
      db.messages.insertForEvent(
        manager,
        'event-after-disabling',
        {
          type: 'database.running',
          projectId: endpoint.projectId,
          databaseId: 'db_down',
          data: {},
        },
        '{}',
      ),
    );
    assert.equal(made, 0, 'no message for a disabled endpoint');
    await sleep(1200);
    assert.equal(receiver.at('/down').length, count, 'nothing more is sent to it');
    assert.ok(
      !receiver.at('/down').some((request) => request.headers['webhook-id'] === waiting.id),
    );
  });

  it('refuses a target that resolves to loopback without WEBHOOK_ALLOW_PRIVATE_TARGETS', async () => {
    const byName = await db.endpoint(receiver.url('/private', 'localhost', 'https'));
    const plain = await db.endpoint(receiver.url('/plain', '93.184.215.14'));
    await db.event(byName, 'db_private');
    await db.event(plain, 'db_plain');
    db.startWorker({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    await waitFor('both attempts recorded', async () => {
      const rows = [...(await db.deliveries(byName.id)), ...(await db.deliveries(plain.id))];
      return rows.length >= 2;
    });
    const [refused] = await db.deliveries(byName.id);
    assert.equal(refused?.status_code, null);
    assert.match(
      refused?.error ?? '',
      /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/,
    );
    assert.ok(refused?.next_attempt_at, 'retried: the name may resolve elsewhere later');
    const [http] = await db.deliveries(plain.id);
    assert.equal(http?.error, 'refused: http: targets are not allowed');
    assert.equal(
      receiver.received.filter((r) => /private|plain/.test(r.headers['x-path'] ?? '')).length,
      0,
    );
  });

  it('keeps the last 100 attempts of an endpoint and the messages they name', async () => {
    const endpoint = await db.endpoint(receiver.url('/many'));
    for (let i = 0; i < 103; i++) {
      await db.event(endpoint, `db_many_${i}`);
      const [claimed] = await db.messages.claim(1, `test:${i}`, 30, 600_000);
      assert.ok(claimed);
      await db.messages.record({
        message: claimed,
        at: new Date(),
        durationMs: 1,
        delivered: true,
        statusCode: 200,
      });
    }
    const kept = await db.deliveries(endpoint.id);
    assert.equal(kept.length, 100);
    const [messages] = await db.sql<{ count: number }>(
      'SELECT count(*)::int AS count FROM notifications.messages WHERE endpoint_id = $1',
      [endpoint.id],
    );
    assert.equal(messages?.count, 100, 'a message no kept attempt names is gone');
  });

  it('logs no secret, signature, body or URL', () => {
    const logged = db.logs.lines.join('\n');
    assert.ok(logged.includes('whk_'), 'the attempts were logged, by ids');
    const signatures = receiver.received.flatMap((request) =>
      (request.headers['webhook-signature'] ?? '').split(' '),
    );
    for (const secret of [...db.secrets, ...signatures])
      assert.ok(!logged.includes(secret), `the logs hold ${secret.slice(0, 12)}…`);
  });
});
