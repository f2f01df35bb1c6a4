import {
  CommonEnv,
  DURATION_PATTERN,
  durationMs,
  isEncryptionKey,
  validateEnv,
} from '@pgcloud/config';
import type { TierLimits } from '@pgcloud/messaging';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
} from 'class-validator';

/** One duration of DURATION_PATTERN, without its anchors. */
const STEP = DURATION_PATTERN.source.slice(1, -1);
/** Durations separated by commas: `5s,30s,2m`. */
const DURATIONS = new RegExp(`^${STEP}(\\s*,\\s*${STEP})*$`);

/** notification-service settings (docs/configuration.md#notification-service). */
export class NotificationServiceConfig extends CommonEnv {
  /**
   * 32 random bytes, base64 (`openssl rand -base64 32`): seals the endpoints' signing secrets
   * at rest (AES-256-GCM, each bound to its endpoint). Required, the same on every replica,
   * and kept: with another key no endpoint can be signed for again.
   */
  @ValidateBy({
    name: 'isEncryptionKey',
    validator: {
      validate: isEncryptionKey,
      defaultMessage: () =>
        'must be set to 32 random bytes, base64-encoded (openssl rand -base64 32): it seals the webhook signing secrets',
    },
  })
  ENCRYPTION_KEY!: string;

  /**
   * Deliver to any address, loopback and private ranges included, and to `http:` URLs: for
   * development and tests only (docs/api/webhooks.md#targets).
   */
  // Read from the raw value: implicit conversion would make the string 'false' true.
  @Transform(({ obj }: { obj: Record<string, unknown> }) => {
    const raw = obj['WEBHOOK_ALLOW_PRIVATE_TARGETS'] ?? 'false';
    return raw === 'true' ? true : raw === 'false' ? false : raw;
  })
  @IsBoolean({ message: 'must be true or false' })
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean = false;

  /**
   * A PEM file of more certificate authorities to trust for targets' TLS certificates,
   * beside the ones Node.js trusts.
   */
  @IsOptional()
  @IsString()
  WEBHOOK_CA_FILE?: string;

  /** How long one delivery attempt may take, in seconds: an answer later than that fails it. */
  @IsInt()
  @Min(1)
  @Max(60)
  WEBHOOK_TIMEOUT_SECONDS: number = 10;

  /**
   * The waits before each retry of a failed delivery, each counted from the attempt before;
   * after the last one fails, the event is given up for that endpoint.
   */
  @Matches(DURATIONS, { message: 'must be durations separated by commas, such as 5s,30s,2m' })
  WEBHOOK_RETRY_SCHEDULE: string = '5s,30s,2m,10m,30m,2h,6h,12h';

  /**
   * How long an event waits at most for an earlier event of the same endpoint and database
   * that is still being retried, from its own creation; then it goes ahead.
   */
  @Matches(DURATION_PATTERN, { message: 'must be a duration such as 10m, 1h or 90s' })
  WEBHOOK_ORDER_WAIT: string = '10m';

  /** An endpoint whose every delivery failed for this long is disabled. */
  @Matches(DURATION_PATTERN, { message: 'must be a duration such as 3d, 12h or 30m' })
  WEBHOOK_DISABLE_AFTER: string = '3d';

  /** How long the old secret keeps signing beside the new one after a rotation. */
  @Matches(DURATION_PATTERN, { message: 'must be a duration such as 24h, 1d or 30m' })
  WEBHOOK_SECRET_OVERLAP: string = '24h';

  /**
   * How long a replica's claim of an event holds, in seconds, renewed every third of it:
   * the events a killed replica was delivering are taken by another within it.
   */
  @IsInt()
  @Min(2)
  @Max(600)
  WEBHOOK_DELIVERY_LEASE_SECONDS: number = 30;

  /** How often, in milliseconds, a replica looks for events due a delivery. */
  @IsInt()
  @Min(20)
  @Max(60_000)
  WEBHOOK_POLL_MS: number = 500;

  /** Deliveries one replica makes at once. */
  @IsInt()
  @Min(1)
  @Max(256)
  WEBHOOK_CONCURRENCY: number = 8;

  /** Webhook endpoints a project may have on the Free tier; one more answers 403 QUOTA_EXCEEDED. */
  @IsInt()
  @Min(1)
  WEBHOOK_LIMIT_FREE: number = 2;

  /** Webhook endpoints a project may have on the Pro tier. */
  @IsInt()
  @Min(1)
  WEBHOOK_LIMIT_PRO: number = 20;

  get webhookLimits(): TierLimits {
    return { free: this.WEBHOOK_LIMIT_FREE, pro: this.WEBHOOK_LIMIT_PRO };
  }

  /** The waits before each retry, in milliseconds. */
  get retryScheduleMs(): number[] {
    return this.WEBHOOK_RETRY_SCHEDULE.split(',').map((step) => durationMs(step.trim()));
  }

  get orderWaitMs(): number {
    return durationMs(this.WEBHOOK_ORDER_WAIT);
  }

  get disableAfterMs(): number {
    return durationMs(this.WEBHOOK_DISABLE_AFTER);
  }

  get secretOverlapMs(): number {
    return durationMs(this.WEBHOOK_SECRET_OVERLAP);
  }
}

/** Reads and checks the settings; a bad value stops the service at start. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): NotificationServiceConfig {
  return validateEnv(NotificationServiceConfig, env);
}
