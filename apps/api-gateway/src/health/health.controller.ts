import { readFileSync } from 'node:fs';
import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { GatewayConfig } from '../config.js';
import { Ctx } from '../http/request-context.js';
import { Public } from '../http/route-flags.js';
import { ApiEnvelope, ApiErrors } from '../openapi/api-envelope.decorator.js';

/** The gateway's package version, as GET / and /openapi.json report it. */
export const API_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** What GET / answers: who answers, and whether every backend service does too. */
export class Health {
  @ApiProperty({ enum: ['pgcloud'] })
  name: 'pgcloud';

  @ApiProperty({ example: '0.1.0', description: 'Package version of the gateway.' })
  version: string;

  @ApiProperty({
    enum: ['healthy', 'degraded'],
    description: '`degraded` (still 200) when a backend service does not answer.',
  })
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
  @ApiEnvelope(Health, { status: 200, description: 'Up; `degraded` when a service is not.' })
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
