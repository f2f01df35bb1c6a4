/** What of an amqplib message settling needs: its delivery tag on its channel. */
export interface Delivery {
  fields: { deliveryTag: number };
}

/** The part of an amqplib channel that settles deliveries. */
export interface SettlingChannel {
  ack(message: Delivery, allUpTo?: boolean): void;
}

/**
 * The acknowledgements of one channel's deliveries, sent once per turn of the event loop:
 * the finished deliveries at the front of the channel's unsettled ones go in one ack with
 * `allUpTo`, and any finished behind one still running go one by one. A delivery is only
 * acknowledged once it is finished, so one a crashed worker held is delivered again. Each
 * ack costs the broker about as much as a delivery (bench/results/2026-11-27-api-latency-3.md);
 * under load, one turn finishes several.
 *
 * Every delivery must be announced (delivered) in the order the channel delivers them,
 * before the turn ends: an ack with `allUpTo` covers every unsettled tag up to its own.
 * BrokerServer keeps one per channel it consumes on.
 */
export class MessageAcks {
  /** Delivery tags announced and not settled yet, in delivery (ascending) order. */
  private readonly unsettled: number[] = [];
  private readonly finishedTags = new Set<number>();
  private flushing: NodeJS.Immediate | undefined;

  constructor(private readonly channel: SettlingChannel) {}

  /** A delivery came; call it in the order the channel delivers, as it does. */
  delivered(message: Delivery): void {
    this.unsettled.push(message.fields.deliveryTag);
  }

  /** A delivery is handled (answered, or refused with an error): acked this turn. */
  finished(message: Delivery): void {
    this.finishedTags.add(message.fields.deliveryTag);
    this.flushing ??= setImmediate(() => this.flush());
  }

  /** Sends the acks of what finished; unsettled deliveries still running stay so. */
  flush(): void {
    this.flushing = undefined;
    let front = 0;
    while (front < this.unsettled.length && this.finishedTags.has(this.unsettled[front] ?? 0))
      front += 1;
    const acked = this.unsettled.splice(0, front);
    const last = acked.at(-1);
    if (last !== undefined) this.ack(last, acked.length > 1);
    for (const tag of acked) this.finishedTags.delete(tag);
    for (const tag of this.finishedTags) {
      this.ack(tag, false);
      const at = this.unsettled.indexOf(tag);
      if (at >= 0) this.unsettled.splice(at, 1);
    }
    this.finishedTags.clear();
  }

  private ack(deliveryTag: number, allUpTo: boolean): void {
    try {
      this.channel.ack({ fields: { deliveryTag } }, allUpTo);
    } catch {
      // A closed channel: the broker delivers its unacked messages again to another.
    }
  }
}
