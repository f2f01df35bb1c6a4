import { readFileSync } from 'node:fs';
import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { GatewayConfig } from '../config.js';
import { Ctx } from '../http/request-context.js';
import { Public } from '../http/route-flags.js';
import { ApiEnvelope, ApiErrors } from '../openapi/api-envelope.decorator.js';
import { HealthModel } from '../openapi/health.model.js';

/** The gateway's package version, as GET / and /openapi.json report it. */
export const API_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** What GET / answers. */
export interface Health {
  name: 'pgcloud';
  version: string;
  status: 'healthy' | 'degraded';
}

/** `GET /`: healthy when every service answers its ping in time, degraded (still 200) otherwise. */
@ApiTags('health')
@Controller()
export class HealthController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly config: GatewayConfig,
  ) {}

  @Public()
  @Get()
  @ApiOperation({ operationId: 'getHealth', summary: 'Name, version and health of the service' })
  @ApiEnvelope(HealthModel, { status: 200, description: 'Up; `degraded` when a service is not.' })
  @ApiErrors('RATE_LIMIT_EXCEEDED')
  async health(@Ctx() ctx: RequestContext): Promise<Health> {
    const answers = await Promise.allSettled(
      this.rpc
        .services()
        .map((service) => this.rpc.ping(service, ctx, this.config.HEALTH_TIMEOUT_MS)),
    );
    const healthy = answers.every((answer) => answer.status === 'fulfilled');
    return { name: 'pgcloud', version: API_VERSION, status: healthy ? 'healthy' : 'degraded' };
  }
}
