import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { ErrorCode } from '@pgcloud/contracts';
import { ErrorBody } from '@pgcloud/contracts';

/**
 * When each code is answered (docs/api/errors.md#codes); a code without one does not
 * compile.
 */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'body or query parameter malformed; `details` names each field',
  DEVICE_CODE_INVALID: 'unknown or already exchanged device_code',
  DEVICE_CODE_EXPIRED: 'device_code older than expires_in',
  AUTH_REQUIRED: 'Authorization missing, malformed, unknown, expired or revoked token',
  ACCESS_DENIED: 'the person denied the device request',
  QUOTA_EXCEEDED: 'tier limit reached',
  FORBIDDEN_HOST:
    'the Host header names no host this deployment serves (daemon: not a loopback name)',
  FORBIDDEN:
    'the verification form was posted without its anti-forgery token or from another origin',
  PROJECT_NOT_FOUND: 'no such project, or owned by another account',
  DATABASE_NOT_FOUND: 'no such database, or owned by another account',
  BACKUP_NOT_FOUND: 'no such backup, or owned by another account',
  RESTORE_NOT_FOUND: 'no such restore, or owned by another account',
  DRILL_NOT_FOUND: 'no such drill, or owned by another account',
  TEMPLATE_NOT_FOUND: 'local daemon: no such template database',
  SNAPSHOT_NOT_FOUND: 'local daemon: the database has no snapshot of that name',
  TOKEN_NOT_FOUND: 'no such token, or owned by another account',
  WEBHOOK_NOT_FOUND: 'no such webhook endpoint in the project',
  NOT_FOUND: 'no such route or method',
  PROJECT_NAME_TAKEN: 'the account already has a project of that name',
  DATABASE_NAME_TAKEN: 'the project already has a database of that name',
  PROJECT_NOT_EMPTY: 'the project still has databases and `force=true` was not given',
  DATABASE_NOT_READY: 'the operation needs the database `running`',
  BACKUP_NOT_READY: 'the backup is not `completed`',
  OPERATION_IN_PROGRESS:
    'a restore is already under way on that database, or a request with the same `Idempotency-Key` is still being answered',
  PITR_NOT_ENABLED: 'the route needs PITR enabled',
  TEMPLATE_IN_USE: 'local daemon: the template database has open connections',
  SNAPSHOT_NAME_TAKEN: 'local daemon: the database has a snapshot of that name',
  RESTORE_NOT_CANCELLABLE: 'cancel of a restore that already finished or is swapping',
  COOLDOWN_ACTIVE:
    'the operation was asked again before its cooldown passed; retry after `Retry-After` seconds',
  STORAGE_IN_USE:
    'a resize to less storage than the data needs (under 90% of the new size), or less where volumes only grow',
  PAYLOAD_TOO_LARGE: 'body over 64 KiB',
  TARGET_TIME_INVALID: 'target_time outside the recovery window',
  IDEMPOTENCY_KEY_REUSED:
    'the `Idempotency-Key` was sent before with a different request (method, path or body)',
  RATE_LIMIT_EXCEEDED: 'the caller spent its request bucket; retry after `Retry-After` seconds',
  INTERNAL_ERROR: 'anything unexpected (logged with the request id, never shown)',
  SERVICE_UNAVAILABLE: 'a backend service or dependency did not answer in time',
};

/** What every failed JSON request answers, with the HTTP status of its code. */
@ApiSchema({ name: 'ErrorEnvelope' })
export class ErrorEnvelope {
  @ApiProperty({ type: Boolean, enum: [false] })
  success: false;

  @ApiProperty({ type: ErrorBody })
  error: ErrorBody;
}
