import { ClientRMQ } from '@nestjs/microservices';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import { coalesceBrokerWrites } from './broker-writes.js';

/** Nest's RMQ client, whose writes to the broker leave once per turn (broker-writes.ts). */
export class BrokerClientRMQ extends ClientRMQ {
  override createClient(): AmqpConnectionManager {
    return coalesceBrokerWrites(super.createClient() as AmqpConnectionManager);
  }
}
