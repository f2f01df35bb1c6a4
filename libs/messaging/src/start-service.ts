import 'reflect-metadata';
import type { LogLevel } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestMicroservice } from '@nestjs/common';
import type { ServiceName } from '@pgcloud/contracts';
import { AckInterceptor } from './ack.interceptor.js';
import { GracefulServerRMQ } from './graceful-server-rmq.js';
import type { BrokerSettings } from './rmq-options.js';
import { rmqServerOptions } from './rmq-options.js';
import { RpcErrorFilter } from './rpc-error.filter.js';
import { createValidationPipe } from './validation.pipe.js';

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** The log levels at and above the configured one. */
export function logLevels(level: string): LogLevel[] {
  const index = LEVELS.indexOf(level as LogLevel);
  return LEVELS.slice(0, index < 0 ? 4 : index + 1);
}

/**
 * Starts a service as a RabbitMQ microservice with pgcloud's settings: explicit acks,
 * validation of every message, one error filter, and a clean stop on SIGTERM.
 */
export async function startService(
  module: Parameters<typeof NestFactory.createMicroservice>[0],
  service: ServiceName,
  broker: BrokerSettings & { LOG_LEVEL: string },
): Promise<INestMicroservice> {
  const { options } = rmqServerOptions(broker, service);
  const app = await NestFactory.createMicroservice(module, {
    strategy: new GracefulServerRMQ(options ?? {}),
    logger: logLevels(broker.LOG_LEVEL),
  });
  app.useGlobalInterceptors(new AckInterceptor());
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new RpcErrorFilter());
  app.enableShutdownHooks();
  await app.listen();
  new Logger('Bootstrap').log(`${service} is listening on ${options?.queue}`);
  return app;
}
