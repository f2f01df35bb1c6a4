import { readFileSync } from 'node:fs';
import { Controller, Get } from '@nestjs/common';
import type { RequestContext } from '@pgcloud/contracts';
import { HEALTH_PING } from '@pgcloud/contracts';
import { ServiceClients } from '../clients/service-clients.js';
import { GatewayConfig } from '../config.js';
import { Ctx } from '../http/request-context.js';
import { Public } from '../http/route-flags.js';

const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

/** What GET / answers. */
export interface Health {
  name: 'pgcloud';
  version: string;
  status: 'healthy' | 'degraded';
}

/** `GET /`: healthy when every service answers its ping in time, degraded (still 200) otherwise. */
@Controller()
export class HealthController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly config: GatewayConfig,
  ) {}

  @Public()
  @Get()
  async health(@Ctx() ctx: RequestContext): Promise<Health> {
    const answers = await Promise.allSettled(
      this.clients
        .all()
        .map(([, client]) => client.send(HEALTH_PING, ctx, {}, this.config.HEALTH_TIMEOUT_MS)),
    );
    const healthy = answers.every((answer) => answer.status === 'fulfilled');
    return { name: 'pgcloud', version, status: healthy ? 'healthy' : 'degraded' };
  }
}
