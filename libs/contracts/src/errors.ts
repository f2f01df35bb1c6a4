import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/**
 * Every error code the pgcloud APIs answer with, and its HTTP status. A code is added here
 * once: its type, the check of what comes over the wire and its status all follow.
 */
const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  DEVICE_CODE_INVALID: 400,
  DEVICE_CODE_EXPIRED: 400,
  AUTH_REQUIRED: 401,
  ACCESS_DENIED: 403,
  QUOTA_EXCEEDED: 403,
  FORBIDDEN_HOST: 403,
  FORBIDDEN: 403,
  PROJECT_NOT_FOUND: 404,
  DATABASE_NOT_FOUND: 404,
  BACKUP_NOT_FOUND: 404,
  RESTORE_NOT_FOUND: 404,
  DRILL_NOT_FOUND: 404,
  TEMPLATE_NOT_FOUND: 404,
  SNAPSHOT_NOT_FOUND: 404,
  TOKEN_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  NOT_FOUND: 404,
  PROJECT_NAME_TAKEN: 409,
  DATABASE_NAME_TAKEN: 409,
  PROJECT_NOT_EMPTY: 409,
  DATABASE_NOT_READY: 409,
  BACKUP_NOT_READY: 409,
  OPERATION_IN_PROGRESS: 409,
  PITR_NOT_ENABLED: 409,
  TEMPLATE_IN_USE: 409,
  SNAPSHOT_NAME_TAKEN: 409,
  RESTORE_NOT_CANCELLABLE: 409,
  COOLDOWN_ACTIVE: 409,
  STORAGE_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  TARGET_TIME_INVALID: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Every error code, in the order above. */
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** One field-level problem of a VALIDATION_ERROR. */
export class ErrorDetail {
  @ApiProperty({ example: 'name' })
  field: string;

  @ApiProperty({ example: 'name must be 3 to 50 characters long' })
  message: string;
}

/** The error as the envelope shows it (docs/api/errors.md#the-envelope). */
@ApiSchema({ name: 'Error' })
export class ErrorBody {
  @ApiProperty({ enum: ERROR_CODES, example: 'VALIDATION_ERROR' })
  code: ErrorCode;

  @ApiProperty({ example: 'The request is not valid.' })
  message: string;

  @ApiPropertyOptional({ type: [ErrorDetail], description: 'VALIDATION_ERROR only.' })
  details?: ErrorDetail[];
}

/** The error as it travels between services: the body, and when to ask again. */
export interface WireError extends ErrorBody {
  /** Seconds until the request may succeed; the gateway answers it as `Retry-After`. */
  retry_after?: number;
}

/** A rule of the domain was broken; carries the code clients see. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** A refusal that may be asked again after `seconds` (sent as `Retry-After`). */
  static retryLater(code: ErrorCode, message: string, seconds: number): DomainError {
    return new DomainError(code, message, undefined, Math.max(1, Math.ceil(seconds)));
  }

  /** Back from the wire. */
  static fromWire(error: WireError): DomainError {
    return new DomainError(error.code, error.message, error.details, error.retry_after);
  }

  /** What the envelope shows. */
  toBody(): ErrorBody {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }

  /** The serialisable form sent over RabbitMQ. */
  toWire(): WireError {
    return this.retryAfterSeconds === undefined
      ? this.toBody()
      : { ...this.toBody(), retry_after: this.retryAfterSeconds };
  }
}

/** True when a value received over the wire is a WireError with a known code. */
export function isWireError(value: unknown): value is WireError {
  if (typeof value !== 'object' || value === null) return false;
  const { code, message, retry_after } = value as Record<string, unknown>;
  return (
    typeof code === 'string' &&
    Object.hasOwn(ERROR_STATUS, code) &&
    typeof message === 'string' &&
    (retry_after === undefined || typeof retry_after === 'number')
  );
}

/** The HTTP status of a code. */
export function httpStatusFor(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
