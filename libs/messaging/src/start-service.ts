import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestMicroservice, Type } from '@nestjs/common';
import type { ServiceName } from '@pgcloud/contracts';
import { SERVICE_QUEUES, parseBrokerUsers } from '@pgcloud/contracts';
import type { ManagementOptions } from '@pgcloud/observability';
import { ManagementModule, createLogger } from '@pgcloud/observability';
import { DeadlineInterceptor } from './deadline.interceptor.js';
import { BrokerServer } from './broker-server.js';
import { MessageValidationInterceptor } from './message-validation.interceptor.js';
import type { BrokerSettings } from './rmq-options.js';
import { brokerServerOptions } from './rmq-options.js';
import { RequestContextInterceptor } from './request-context.interceptor.js';
import { RpcErrorFilter } from './rpc-error.filter.js';
import { RpcMetricsInterceptor } from './rpc-metrics.interceptor.js';
import { SenderInterceptor } from './sender.interceptor.js';

/** The settings startService reads: the broker's, the log level and the management port. */
export type ServiceSettings = BrokerSettings &
  Pick<ManagementOptions, 'MANAGEMENT_PORT' | 'MANAGEMENT_HOST'> & {
    LOG_LEVEL: string;
    LOG_FORMAT?: string;
  };

/** The root of a service: its own module next to the management port's. */
@Module({})
class ServiceRootModule {}

/**
 * Starts a service on pgcloud's RabbitMQ transport (BrokerServer: acks once answered, a
 * drained stop) with its settings: messages only from the apps each pattern allows,
 * validation of every message against its declaration, no start after the caller's
 * deadline, one error filter, timing of every request, the management port (health and
 * metrics), and a clean stop on SIGTERM.
 */
export async function startService(
  module: DynamicModule | Type<unknown>,
  service: ServiceName,
  broker: ServiceSettings,
): Promise<INestMicroservice> {
  const options = brokerServerOptions(broker, service);
  const strategy = new BrokerServer(options);
  const root: DynamicModule = {
    module: ServiceRootModule,
    imports: [
      module,
      ManagementModule.forRoot({
        service: SERVICE_QUEUES[service],
        MANAGEMENT_PORT: broker.MANAGEMENT_PORT,
        MANAGEMENT_HOST: broker.MANAGEMENT_HOST,
        sources: [strategy],
      }),
    ],
  };
  const app = await NestFactory.createMicroservice(root, {
    strategy,
    logger: createLogger(SERVICE_QUEUES[service], broker),
  });
  // Time everything, refusals included; refuse a sender not allowed before reading the
  // message; validate before anything reads it; the request id last, right around the handler:
  // Nest carries the async context into the handler only from the innermost interceptor
  // (the others log with the id themselves).
  app.useGlobalInterceptors(
    new RpcMetricsInterceptor(),
    new SenderInterceptor(parseBrokerUsers(broker.BROKER_USERS)),
    new MessageValidationInterceptor(),
    new DeadlineInterceptor(),
    new RequestContextInterceptor(),
  );
  app.useGlobalFilters(new RpcErrorFilter());
  app.enableShutdownHooks();
  await app.listen();
  new Logger('Bootstrap').log(`${service} is listening on ${options.queue}`);
  return app;
}
