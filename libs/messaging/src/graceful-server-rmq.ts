import { ServerRMQ } from '@nestjs/microservices';
import type { ReadinessCheck, ReadinessSource } from '@pgcloud/observability';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import { connectionCheck } from '@pgcloud/observability';
import { coalesceBrokerWrites } from './broker-writes.js';
import type { Delivery, SettlingChannel } from './message-acks.js';
import { messageAcks } from './message-acks.js';

/** How long a stopping service waits for the broker to confirm replies already sent. */
const REPLY_CONFIRM_GRACE_MS = 250;

/**
 * Nest's RMQ server sends replies on a confirm channel without waiting for the confirm;
 * closing at once rejects those confirms with nobody to catch them. A short grace lets
 * the broker confirm what was already sent, so a stop loses no reply and logs no error.
 * Its connection's state is part of the service's readiness.
 */
export class GracefulServerRMQ extends ServerRMQ implements ReadinessSource {
  /** The connection the service consumes its queue on is up (/readyz). */
  readinessChecks(): ReadinessCheck[] {
    return [connectionCheck('broker-consumer', () => this.connection()?.isConnected() ?? false)];
  }

  // Nest declares the field with a type its declarations do not resolve here.
  private connection(): AmqpConnectionManager | null {
    return this.server as AmqpConnectionManager | null;
  }

  /**
   * Nest tries JSON.parse on every pattern, for object patterns; pgcloud's are plain names
   * (`projects.list`), and that parse threw, and was caught, once per message.
   */
  protected override getRouteFromPattern(pattern: string): string {
    return /^[{[]/.test(pattern) ? super.getRouteFromPattern(pattern) : pattern;
  }

  /** Its writes to the broker leave once per turn (broker-writes.ts). */
  override async createClient<T = AmqpConnectionManager>(): Promise<T> {
    return coalesceBrokerWrites(await super.createClient<AmqpConnectionManager>()) as T;
  }

  /** Each delivery is announced to its channel's acks first, in the order they come. */
  override handleMessage(message: Record<string, unknown> | null, channel: SettlingChannel) {
    if (message) messageAcks(channel).delivered(message as unknown as Delivery);
    return super.handleMessage(message as Record<string, unknown>, channel);
  }

  override async close(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, REPLY_CONFIRM_GRACE_MS));
    await super.close();
  }
}
