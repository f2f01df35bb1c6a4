import { Controller, Inject } from '@nestjs/common';
import type { HealthPong } from '@pgcloud/contracts';
import { APP_NAMES, EmptyDto, HEALTH_PING } from '@pgcloud/contracts';
import { Handles } from './handles.decorator.js';

/** Token under which a service provides its own name for the health answer. */
export const SERVICE_NAME = Symbol('SERVICE_NAME');

/** Answers the health ping of any app of the deployment; proves the service consumes its queue. */
@Controller()
export class HealthController {
  constructor(@Inject(SERVICE_NAME) private readonly service: string) {}

  @Handles({ pattern: HEALTH_PING, request: EmptyDto, senders: APP_NAMES })
  ping(): HealthPong {
    return { service: this.service };
  }
}
