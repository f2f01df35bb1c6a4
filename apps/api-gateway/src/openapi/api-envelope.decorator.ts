import type { Type } from '@nestjs/common';
import { applyDecorators } from '@nestjs/common';
import type { HeadersObject, MediaTypeObject, SchemaObject } from '@nestjs/swagger';
import { ApiBody, ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { ErrorCode, ErrorDetail } from '@pgcloud/contracts';
import { httpStatusFor } from '@pgcloud/contracts';
import { ERROR_MEANINGS, ErrorEnvelope } from './error-envelope.model.js';

type Decorator = MethodDecorator & ClassDecorator;

/** The success envelope around one model, or around one of several (`oneOf`). */
function envelopeSchema(models: Type[]): SchemaObject {
  const refs = models.map((model) => ({ $ref: getSchemaPath(model) }));
  return {
    type: 'object',
    required: ['success', 'data'],
    properties: {
      success: { type: 'boolean', enum: [true] },
      data: refs.length === 1 ? refs[0] : { oneOf: refs },
    },
  };
}

/**
 * Documents a success answer: the envelope `{success: true, data}` whose data is the model
 * (or one of the models). The envelope is built by one interceptor, not by the handlers,
 * so their return types cannot tell the scanner this shape.
 */
export function ApiEnvelope(
  model: Type | Type[],
  options: { status: 200 | 201; description: string },
): Decorator {
  const models = Array.isArray(model) ? model : [model];
  return applyDecorators(
    ApiExtraModels(...models),
    ApiResponse({ ...options, schema: envelopeSchema(models) }),
  );
}

/**
 * Documents a request body that takes one of several shapes (`oneOf`), each a class of
 * contracts, where one DTO validates them all (PITR_RESTORE_BODIES: exactly one target).
 */
export function ApiBodyOneOf(models: readonly Type[]): Decorator {
  return applyDecorators(
    ApiExtraModels(...models),
    ApiBody({ schema: { oneOf: models.map((model) => ({ $ref: getSchemaPath(model) })) } }),
  );
}

// Headers that come with some errors (docs/api/errors.md#codes, #rate-limits).
const ERROR_HEADERS: Partial<Record<number, HeadersObject>> = {
  401: { 'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string' } } },
  409: {
    'Retry-After': {
      description: 'COOLDOWN_ACTIVE only: seconds until the operation is allowed again.',
      schema: { type: 'integer' },
    },
  },
  429: {
    'Retry-After': {
      description: 'Seconds until one request is allowed again.',
      schema: { type: 'integer' },
    },
  },
};

/** What every route under /projects/{project_id}/databases/{name} may answer besides its own. */
export const DATABASE_ROUTE_ERRORS = [
  'AUTH_REQUIRED',
  'PROJECT_NOT_FOUND',
  'DATABASE_NOT_FOUND',
  'RATE_LIMIT_EXCEEDED',
  'SERVICE_UNAVAILABLE',
] as const satisfies readonly ErrorCode[];

/**
 * Documents the error envelopes a route can answer, one response per HTTP status (taken
 * from contracts, so the statuses cannot drift), each listing its codes with an example.
 * A code listed twice (from two lists) is documented once.
 */
export function ApiErrors(...codes: ErrorCode[]): Decorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = httpStatusFor(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return applyDecorators(
    ApiExtraModels(ErrorEnvelope),
    ...[...byStatus].map(([status, group]) =>
      ApiResponse({
        status,
        description: describeCodes(group),
        headers: ERROR_HEADERS[status],
        content: { 'application/json': errorMedia(group) },
      }),
    ),
  );
}

/**
 * An HTML page answer (the /device form), outside the envelope. `errors` are codes the
 * edge may answer with the same status as a JSON error envelope instead.
 */
export function ApiHtml(status: number, description: string, errors: ErrorCode[] = []): Decorator {
  const html = { 'text/html': { schema: { type: 'string' as const } } };
  if (errors.length === 0) return ApiResponse({ status, description, content: html });
  return applyDecorators(
    ApiExtraModels(ErrorEnvelope),
    ApiResponse({
      status,
      description: `${description}\n\nAs JSON, from the edge: ${describeCodes(errors)}`,
      headers: ERROR_HEADERS[status],
      content: { ...html, 'application/json': errorMedia(errors) },
    }),
  );
}

function describeCodes(codes: ErrorCode[]): string {
  return codes.map((code) => `\`${code}\`: ${ERROR_MEANINGS[code]}.`).join('\n\n');
}

function errorMedia(codes: ErrorCode[]): MediaTypeObject {
  return {
    schema: { $ref: getSchemaPath(ErrorEnvelope) },
    examples: Object.fromEntries(
      codes.map((code) => [
        code,
        { summary: code, value: { success: false, error: example(code) } },
      ]),
    ),
  };
}

function example(code: ErrorCode): { code: ErrorCode; message: string; details?: ErrorDetail[] } {
  const message = ERROR_MEANINGS[code].replace(/`/g, '');
  return code === 'VALIDATION_ERROR'
    ? { code, message, details: [{ field: 'name', message: 'name must be a string' }] }
    : { code, message };
}
