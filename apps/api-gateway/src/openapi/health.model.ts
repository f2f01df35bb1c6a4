import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Health } from '../health/health.controller.js';

/** GET /: who answers, and whether every backend service does too. */
@ApiSchema({ name: 'Health' })
export class HealthModel implements Health {
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
