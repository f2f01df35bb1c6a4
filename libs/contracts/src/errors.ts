/** Every error code the pgcloud APIs answer with (spec/decisions.md section 1). */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'DEVICE_CODE_INVALID'
  | 'DEVICE_CODE_EXPIRED'
  | 'AUTH_REQUIRED'
  | 'ACCESS_DENIED'
  | 'QUOTA_EXCEEDED'
  | 'FORBIDDEN_HOST'
  | 'FORBIDDEN'
  | 'PROJECT_NOT_FOUND'
  | 'DATABASE_NOT_FOUND'
  | 'BACKUP_NOT_FOUND'
  | 'RESTORE_NOT_FOUND'
  | 'TEMPLATE_NOT_FOUND'
  | 'NOT_FOUND'
  | 'PROJECT_NAME_TAKEN'
  | 'DATABASE_NAME_TAKEN'
  | 'PROJECT_NOT_EMPTY'
  | 'DATABASE_NOT_READY'
  | 'BACKUP_NOT_READY'
  | 'OPERATION_IN_PROGRESS'
  | 'PITR_NOT_ENABLED'
  | 'TEMPLATE_IN_USE'
  | 'RESTORE_NOT_CANCELLABLE'
  | 'PAYLOAD_TOO_LARGE'
  | 'TARGET_TIME_INVALID'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'RATE_LIMIT_EXCEEDED'
  | 'INTERNAL_ERROR'
  | 'SERVICE_UNAVAILABLE';

/** One field-level problem of a VALIDATION_ERROR. */
export interface ErrorDetail {
  field: string;
  message: string;
}

/** The error as it travels between services and reaches the envelope. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: ErrorDetail[];
}

/** A rule of the domain was broken; carries the code clients see. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** The serialisable form sent over RabbitMQ and put in the envelope. */
  toBody(): ErrorBody {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

const ERROR_CODES = new Set<string>([
  'VALIDATION_ERROR',
  'DEVICE_CODE_INVALID',
  'DEVICE_CODE_EXPIRED',
  'AUTH_REQUIRED',
  'ACCESS_DENIED',
  'QUOTA_EXCEEDED',
  'FORBIDDEN_HOST',
  'FORBIDDEN',
  'PROJECT_NOT_FOUND',
  'DATABASE_NOT_FOUND',
  'BACKUP_NOT_FOUND',
  'RESTORE_NOT_FOUND',
  'TEMPLATE_NOT_FOUND',
  'NOT_FOUND',
  'PROJECT_NAME_TAKEN',
  'DATABASE_NAME_TAKEN',
  'PROJECT_NOT_EMPTY',
  'DATABASE_NOT_READY',
  'BACKUP_NOT_READY',
  'OPERATION_IN_PROGRESS',
  'PITR_NOT_ENABLED',
  'TEMPLATE_IN_USE',
  'RESTORE_NOT_CANCELLABLE',
  'PAYLOAD_TOO_LARGE',
  'TARGET_TIME_INVALID',
  'IDEMPOTENCY_KEY_REUSED',
  'RATE_LIMIT_EXCEEDED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] satisfies ErrorCode[]);

/** True when a value received over the wire is an ErrorBody with a known code. */
export function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const { code, message } = value as Record<string, unknown>;
  return typeof code === 'string' && ERROR_CODES.has(code) && typeof message === 'string';
}

/** The HTTP status of each code; a new code without a status does not compile. */
export function httpStatusFor(code: ErrorCode): number {
  switch (code) {
    case 'VALIDATION_ERROR':
    case 'DEVICE_CODE_INVALID':
    case 'DEVICE_CODE_EXPIRED':
      return 400;
    case 'AUTH_REQUIRED':
      return 401;
    case 'ACCESS_DENIED':
    case 'QUOTA_EXCEEDED':
    case 'FORBIDDEN_HOST':
    case 'FORBIDDEN':
      return 403;
    case 'PROJECT_NOT_FOUND':
    case 'DATABASE_NOT_FOUND':
    case 'BACKUP_NOT_FOUND':
    case 'RESTORE_NOT_FOUND':
    case 'TEMPLATE_NOT_FOUND':
    case 'NOT_FOUND':
      return 404;
    case 'PROJECT_NAME_TAKEN':
    case 'DATABASE_NAME_TAKEN':
    case 'PROJECT_NOT_EMPTY':
    case 'DATABASE_NOT_READY':
    case 'BACKUP_NOT_READY':
    case 'OPERATION_IN_PROGRESS':
    case 'PITR_NOT_ENABLED':
    case 'TEMPLATE_IN_USE':
    case 'RESTORE_NOT_CANCELLABLE':
      return 409;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'TARGET_TIME_INVALID':
    case 'IDEMPOTENCY_KEY_REUSED':
      return 422;
    case 'RATE_LIMIT_EXCEEDED':
      return 429;
    case 'INTERNAL_ERROR':
      return 500;
    case 'SERVICE_UNAVAILABLE':
      return 503;
  }
}
