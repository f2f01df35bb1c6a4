import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Logger, Module } from '@nestjs/common';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import amqp from 'amqplib';
import { IsBoolean, IsString } from 'class-validator';
import { Handles, MessageBody } from './handles.decorator.js';
import { queueName } from './rmq-options.js';
import { ServiceClient } from './service-client.js';
import type { ServiceSettings } from './start-service.js';
import { startService } from './start-service.js';

const RABBITMQ_URL = process.env['RABBITMQ_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';

class EchoRequest {
  @IsString()
  key!: string;

  @IsBoolean()
  hold!: boolean;
}
const ECHO = { pattern: 'test.echo', request: EchoRequest, senders: ['api-gateway'] as const };

/** Requests asking to be held wait here until released, as a slow or stuck handler does. */
const held = new Map<string, () => void>();
const released = new Set<string>();

@Controller()
class EchoController {
  @Handles(ECHO)
  async echo(@MessageBody() body: EchoRequest): Promise<{ key: string }> {
    if (body.hold && !released.has(body.key))
      await new Promise<void>((resolve) => held.set(body.key, resolve));
    return { key: body.key };
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

async function waitFor(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('acks and stops of a service consumer, on the real RabbitMQ', { timeout: 90_000 }, () => {
  const broker: ServiceSettings = {
    RABBITMQ_URL,
    RMQ_QUEUE_PREFIX: `pgcloud-test-acks-${randomBytes(4).toString('hex')}`,
    RMQ_PREFETCH: 32,
    MANAGEMENT_PORT: 0,
    MANAGEMENT_HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    // This test's broker login, the local guest, sends as the gateway.
    BROKER_USERS: 'guest=api-gateway',
  };
  const queue = queueName(broker.RMQ_QUEUE_PREFIX, 'projects');
  let client: ServiceClient;
  let connection: amqp.ChannelModel;
  let channel: amqp.Channel;

  const ask = (key: string, hold = false): Promise<unknown> =>
    client.send(ECHO.pattern, { requestId: `req-${key}` }, { key, hold }, 60_000);
  const waiting = async (): Promise<number> => (await channel.checkQueue(queue)).messageCount;

  before(async () => {
    Logger.overrideLogger(['error']);
    client = ServiceClient.connect(broker, 'projects', 60_000);
    connection = await amqp.connect(RABBITMQ_URL);
    channel = await connection.createChannel();
  });

  after(async () => {
    await client?.close();
    await channel?.deleteQueue(queue);
    await connection?.close();
  });

  it('acknowledges every answered request: none comes back when the service stops', async () => {
    const service = await startService(EchoModule, 'projects', broker);
    const keys = Array.from({ length: 100 }, (_, i) => `a${i}`);
    const answers = await Promise.all(keys.map((key) => ask(key)));
    assert.deepEqual(
      answers,
      keys.map((key) => ({ key })),
    );
    await service.close();
    assert.equal(await waiting(), 0);
  });

  it('keeps a request its worker still holds unacknowledged behind later ones, and it is answered after a crash', async () => {
    const first = await startService(EchoModule, 'projects', broker);
    const stuck = ask('stuck', true);
    await waitFor('the held request to reach its handler', () => held.has('stuck'));
    const keys = Array.from({ length: 20 }, (_, i) => `b${i}`);
    assert.deepEqual(
      await Promise.all(keys.map((key) => ask(key))),
      keys.map((key) => ({ key })),
    );
    // The worker dies holding it (its connection drops): only that one is back in the queue.
    await first.unwrap<AmqpConnectionManager>().close();
    assert.equal(await waiting(), 1);
    released.add('stuck');
    held.get('stuck')?.();
    held.delete('stuck');
    const second = await startService(EchoModule, 'projects', broker);
    try {
      assert.deepEqual(await stuck, { key: 'stuck' });
    } finally {
      await second.close();
      await first.close();
    }
    assert.equal(await waiting(), 0);
  });

  it('refuses a pattern no handler takes, and settles it', async () => {
    const service = await startService(EchoModule, 'projects', broker);
    try {
      await assert.rejects(
        client.send('test.nobody', { requestId: 'req-nobody' }, {}, 10_000),
        (err: { code?: string }) => err.code === 'SERVICE_UNAVAILABLE',
      );
    } finally {
      await service.close();
    }
    assert.equal(await waiting(), 0);
  });

  it('answers the requests it holds before it stops, and none comes back', async () => {
    const service = await startService(EchoModule, 'projects', broker);
    const draining = ask('draining', true);
    await waitFor('the held request to reach its handler', () => held.has('draining'));
    const stopped = service.close();
    await sleep(200);
    held.get('draining')?.();
    assert.deepEqual(await draining, { key: 'draining' });
    await stopped;
    assert.equal(await waiting(), 0);
  });
});
