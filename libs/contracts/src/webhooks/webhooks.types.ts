import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { idSchema } from '../ids.js';

/**
 * The events a webhook endpoint may subscribe to (docs/api/webhooks.md#events): each is
 * made from a domain event of the service that owns the resource.
 */
export const WEBHOOK_EVENT_TYPES = [
  'database.running',
  'database.failed',
  'database.expired',
  'database.storage_fenced',
  'database.credentials_rotated',
  'backup.completed',
  'backup.failed',
  'restore.completed',
  'restore.failed',
  'restore.cancelled',
  'drill.passed',
  'drill.failed',
  'archive.stale',
  'archive.broken',
  'archive.healthy',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** `events: ["*"]` subscribes an endpoint to every type, those added later included. */
export const WEBHOOK_WILDCARD = '*';

/** An endpoint of a project that events are delivered to, signed (no secret shown). */
export class Webhook {
  @ApiProperty(idSchema('whk'))
  id: string;

  @ApiProperty({ example: 'https://hooks.example.com/pgcloud' })
  url: string;

  @ApiProperty({
    type: [String],
    example: ['backup.failed', 'drill.failed'],
    description: 'The event types delivered, or `["*"]` for all of them.',
  })
  events: string[];

  @ApiPropertyOptional({ example: 'on-call pager' })
  description?: string;

  @ApiProperty({ description: 'False once turned off, by PATCH or after 3 days of failures.' })
  enabled: boolean;

  @ApiPropertyOptional({
    example: 'every delivery failed for 3 days (last: connection refused)',
    description: 'Why pgcloud turned the endpoint off, when it did.',
  })
  disabled_reason?: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** An endpoint with its signing secret: answered once, by create and by rotate-secret. */
export class WebhookWithSecret extends Webhook {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description:
      '`whsec_` and the base64 of 32 random bytes; the key is those bytes. Shown only in this answer.',
  })
  secret: string;
}

/** GET .../webhooks. */
export class WebhookList {
  @ApiProperty({ type: [Webhook], description: 'Oldest first, without secrets.' })
  webhooks: Webhook[];
}

/** One attempt to deliver one event to an endpoint. */
export class WebhookDelivery {
  @ApiProperty(idSchema('dlv'))
  id: string;

  @ApiProperty({
    ...idSchema('msg'),
    description: 'The event, as the `webhook-id` header names it on every attempt.',
  })
  event_id: string;

  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES })
  type: string;

  @ApiProperty({ example: 1, description: 'The first attempt is 1.' })
  attempt: number;

  @ApiPropertyOptional({ example: 500, description: 'The status the receiver answered.' })
  status_code?: number;

  @ApiPropertyOptional({
    example: 'timed out after 10 s',
    description: 'Why the attempt failed, when no status tells it.',
  })
  error?: string;

  @ApiProperty({ example: 84 })
  duration_ms: number;

  @ApiProperty({ format: 'date-time' })
  at: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the event is tried again, if this attempt failed and tries are left.',
  })
  next_attempt_at?: string;
}

/** GET .../webhooks/{id}/deliveries. */
export class WebhookDeliveryList {
  @ApiProperty({ type: [WebhookDelivery], description: 'The last 100 attempts, newest first.' })
  deliveries: WebhookDelivery[];
}
