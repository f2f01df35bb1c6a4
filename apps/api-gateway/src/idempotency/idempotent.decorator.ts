import { UseInterceptors, applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { ErrorCode } from '@pgcloud/contracts';
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from './idempotency-key.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';

/** What an Idempotency-Key adds to a route's errors; list them in its ApiErrors. */
export const IDEMPOTENT_ROUTE_ERRORS = [
  'VALIDATION_ERROR',
  'OPERATION_IN_PROGRESS',
  'IDEMPOTENCY_KEY_REUSED',
  'SERVICE_UNAVAILABLE',
] as const satisfies readonly ErrorCode[];

/**
 * A POST that creates something (docs/api/idempotency.md) and accepts an Idempotency-Key,
 * documented with the header and, on its success answer (`successStatus`), the replay
 * header.
 */
export function Idempotent(successStatus: 200 | 201): MethodDecorator {
  return applyDecorators(
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        'Names this request so it can be sent again safely: 1 to 255 printable ASCII characters, ' +
        'a new one for each new request (a UUID, say). The same key from the same account with ' +
        'the same method, path and body within 24 hours gives the first answer again (its ' +
        'status and body, success or 4xx error) with `Idempotent-Replayed: true`, and creates ' +
        'nothing more; with another request it is 422 `IDEMPOTENCY_KEY_REUSED`; while the first ' +
        'is still being answered, 409 `OPERATION_IN_PROGRESS`. After a 5xx the key is free again.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
    }),
    ApiResponse({
      status: successStatus,
      headers: {
        [REPLAYED_HEADER]: {
          description: 'Only on a replay: this is the first answer to the Idempotency-Key.',
          schema: { type: 'string', enum: ['true'] },
        },
      },
    }),
  );
}
