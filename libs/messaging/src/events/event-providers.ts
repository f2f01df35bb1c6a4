import type { Provider } from '@nestjs/common';
import type { ServiceName } from '@pgcloud/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { EventPublisher } from '../event-publisher.js';
import type { BrokerSettings } from '../rmq-options.js';
import type { EventSubscriberOptions } from './event-subscriber.js';
import { EventSubscriber } from './event-subscriber.js';
import { Outbox } from './outbox.js';
import type { OutboxRelayOptions } from './outbox-relay.js';
import { OutboxRelay } from './outbox-relay.js';

/**
 * What a service that publishes events provides: its EventPublisher, the Outbox its
 * transactions write to, and the relay that publishes from it (on the TypeORM DataSource).
 */
export function outboxProviders(broker: BrokerSettings, options?: OutboxRelayOptions): Provider[] {
  return [
    { provide: EventPublisher, useFactory: () => new EventPublisher(broker) },
    {
      provide: Outbox,
      useFactory: (dataSource: DataSource) => new Outbox(dataSource),
      inject: [getDataSourceToken()],
    },
    {
      provide: OutboxRelay,
      useFactory: (dataSource: DataSource, outbox: Outbox, publisher: EventPublisher) =>
        new OutboxRelay(dataSource, outbox, publisher, options),
      inject: [getDataSourceToken(), Outbox, EventPublisher],
    },
  ];
}

/**
 * The EventSubscriber of a service that consumes events, on its own queue; its listeners
 * register their handlers with `on` when the module initialises.
 */
export function eventSubscriberProvider(
  broker: BrokerSettings,
  service: ServiceName,
  options?: EventSubscriberOptions,
): Provider {
  return {
    provide: EventSubscriber,
    useFactory: (dataSource: DataSource) =>
      new EventSubscriber(dataSource, broker, service, options),
    inject: [getDataSourceToken()],
  };
}
