import { Controller, Inject } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type { HealthPong } from '@pgcloud/contracts';
import { HEALTH_PING } from '@pgcloud/contracts';

/** Token under which a service provides its own name for the health answer. */
export const SERVICE_NAME = Symbol('SERVICE_NAME');

/** Answers the gateway's health ping; proves the service consumes its queue. */
@Controller()
export class HealthController {
  constructor(@Inject(SERVICE_NAME) private readonly service: string) {}

  @MessagePattern(HEALTH_PING)
  ping(): HealthPong {
    return { service: this.service };
  }
}
