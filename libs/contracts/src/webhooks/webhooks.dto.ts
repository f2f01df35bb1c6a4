import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  MaxLength,
} from 'class-validator';
import { WEBHOOK_WILDCARD, WEBHOOK_EVENT_TYPES } from './webhooks.types.js';

const EVENT_NAMES = [...WEBHOOK_EVENT_TYPES, WEBHOOK_WILDCARD];

/** How long a target URL may be. */
export const WEBHOOK_URL_MAX_LENGTH = 2000;

/**
 * A target URL: http or https with a host and no user name or password. That it is
 * `https:` (unless the deployment allows private targets) is the service's rule.
 */
function IsWebhookUrl(): PropertyDecorator {
  const rules = [
    IsString(),
    MaxLength(WEBHOOK_URL_MAX_LENGTH),
    IsUrl(
      {
        protocols: ['https', 'http'],
        require_protocol: true,
        require_tld: false,
        disallow_auth: true,
      },
      { message: 'url must be an https URL with a host and no user name or password' },
    ),
  ];
  return (target, property) => rules.forEach((rule) => rule(target, property));
}

/** The event types of an endpoint: known names, or `*`. */
function IsWebhookEvents(): PropertyDecorator {
  const rules = [
    IsArray(),
    ArrayNotEmpty(),
    ArrayUnique(),
    ArrayMaxSize(EVENT_NAMES.length),
    IsIn(EVENT_NAMES, {
      each: true,
      message: `each event must be one of ${EVENT_NAMES.join(', ')}`,
    }),
  ];
  return (target, property) => rules.forEach((rule) => rule(target, property));
}

/** POST /projects/{id}/webhooks. */
export class CreateWebhookDto {
  @ApiProperty({ example: 'https://hooks.example.com/pgcloud', maxLength: 2000 })
  @IsWebhookUrl()
  url: string;

  @ApiProperty({
    type: [String],
    example: ['backup.failed', 'drill.failed'],
    description: `Event types to deliver (${WEBHOOK_EVENT_TYPES.join(', ')}), or \`["*"]\` for all.`,
  })
  @IsWebhookEvents()
  events: string[];

  @ApiPropertyOptional({ example: 'on-call pager', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  description?: string;
}

/** PATCH /projects/{id}/webhooks/{webhook_id}: what is given changes. */
export class UpdateWebhookDto {
  @ApiPropertyOptional({ example: 'https://hooks.example.com/pgcloud', maxLength: 2000 })
  @IsOptional()
  @IsWebhookUrl()
  url?: string;

  @ApiPropertyOptional({ type: [String], example: ['*'] })
  @IsOptional()
  @IsWebhookEvents()
  events?: string[];

  @ApiPropertyOptional({ example: 'on-call pager', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  description?: string;

  @ApiPropertyOptional({
    description: 'True turns a disabled endpoint on again (and clears disabled_reason).',
  })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}
