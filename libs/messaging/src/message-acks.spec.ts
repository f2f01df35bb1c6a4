import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Delivery, SettlingChannel } from './message-acks.js';
import { MessageAcks } from './message-acks.js';

/** What the channel was asked to settle, as `ack 3` or `ack ..5` (allUpTo). */
class RecordingChannel implements SettlingChannel {
  readonly sent: string[] = [];
  ack(message: Delivery, allUpTo = false): void {
    this.sent.push(`ack ${allUpTo ? '..' : ''}${message.fields.deliveryTag}`);
  }
}

const delivery = (deliveryTag: number): Delivery => ({ fields: { deliveryTag } });

function deliver(acks: MessageAcks, ...tags: number[]): void {
  for (const tag of tags) acks.delivered(delivery(tag));
}

describe('MessageAcks', () => {
  it('acks the deliveries finished in one turn together, once the turn is over', async () => {
    const channel = new RecordingChannel();
    const acks = new MessageAcks(channel);
    deliver(acks, 1, 2, 3);
    acks.finished(delivery(2));
    acks.finished(delivery(1));
    acks.finished(delivery(3));
    assert.deepEqual(channel.sent, []);
    await nextTurn();
    assert.deepEqual(channel.sent, ['ack ..3']);
  });

  it('never acks past a delivery still running: those behind it go one by one', async () => {
    const channel = new RecordingChannel();
    const acks = new MessageAcks(channel);
    deliver(acks, 1, 2, 3, 4);
    acks.finished(delivery(1));
    acks.finished(delivery(3));
    acks.finished(delivery(4));
    await nextTurn();
    assert.deepEqual(channel.sent, ['ack 1', 'ack 3', 'ack 4']);
    acks.finished(delivery(2));
    deliver(acks, 5, 6);
    acks.finished(delivery(5));
    await nextTurn();
    assert.deepEqual(channel.sent.slice(3), ['ack ..5']);
  });

  it('acks a finished delivery it was never told of on its own', async () => {
    const channel = new RecordingChannel();
    const acks = new MessageAcks(channel);
    acks.finished(delivery(7));
    await nextTurn();
    assert.deepEqual(channel.sent, ['ack 7']);
  });

  it('takes a closed channel in its stride: the broker delivers those messages again', async () => {
    const acks = new MessageAcks({
      ack: () => {
        throw new Error('Channel closed');
      },
    });
    deliver(acks, 1);
    acks.finished(delivery(1));
    await nextTurn();
  });
});
