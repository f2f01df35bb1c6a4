import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import amqp from 'amqp-connection-manager';
import type { ChannelModel } from 'amqplib';
import { coalesceBrokerWrites } from './broker-writes.js';

const RABBITMQ_URL = process.env['RABBITMQ_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';

describe('coalesceBrokerWrites on the real RabbitMQ', () => {
  it("finds amqplib's socket and holds a turn's publishes until the turn ends", async () => {
    const manager = coalesceBrokerWrites(amqp.connect([RABBITMQ_URL]));
    try {
      const [{ connection }] = (await once(manager, 'connect')) as [{ connection: ChannelModel }];
      // Where amqplib keeps the socket, as broker-writes.ts reads it.
      const socket = (connection.connection as unknown as { stream: Socket }).stream;
      const channel = await connection.createChannel();
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(socket.writableCorked, 0);
      socket.write(Buffer.alloc(0));
      assert.equal(socket.writableCorked, 1, 'a write held until the turn ends');
      await new Promise((resolve) => process.nextTick(resolve));
      assert.equal(socket.writableCorked, 0);
      for (let i = 0; i < 3; i++) channel.sendToQueue(queue, Buffer.from(`m${i}`));
      const got: string[] = [];
      for (let tries = 0; got.length < 3 && tries < 100; tries++) {
        const message = await channel.get(queue);
        if (message) {
          got.push(message.content.toString());
          channel.ack(message);
        } else await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(got, ['m0', 'm1', 'm2']);
    } finally {
      await manager.close();
    }
  });
});
