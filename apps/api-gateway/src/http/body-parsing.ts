import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { BODY_LIMIT_BYTES, noRoute, unreadableBody } from '@pgcloud/http';
import type { FastifyInstance } from 'fastify';
import { answerError } from './answer-error.js';
import type { GatewayRequest } from './request-context.js';

/** What parseJsonBody answers for a body that is not a JSON object or array. */
export const UNREADABLE = Symbol('unreadable body');

/** True when a Content-Type names no charset or UTF-8, the only one a JSON body is read in. */
export function isUtf8(contentType: string | undefined): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/**
 * A JSON body as the API reads it: an object or an array (a bare string or number is not a
 * request), and an empty body as an empty object.
 */
export function parseJsonBody(text: string): unknown {
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return {};
  if (first !== '{' && first !== '[') return UNREADABLE;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return UNREADABLE;
  }
}

/** A form body's fields; a field sent more than once keeps every value. */
export function parseFormBody(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null) as Record<
    string,
    string | string[]
  >;
  for (const [name, value] of new URLSearchParams(text)) {
    const earlier = fields[name];
    fields[name] =
      earlier === undefined
        ? value
        : Array.isArray(earlier)
          ? [...earlier, value]
          : [earlier, value];
  }
  return fields;
}

/**
 * The bodies the gateway reads: JSON and forms (the device page), up to 64 KiB (413
 * PAYLOAD_TOO_LARGE above it, before anything else), on known routes only: a request no
 * route takes is 404 before its body is read. A body that is not valid JSON in UTF-8 is only
 * noted on the request, so it is answered in spec/decisions.md section 1's order: after the
 * rate limit and authentication (401), as a validation error (400). A body of any other type
 * is not read; its route finds no body.
 */
export function addBodyParsers(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request, reply) => {
    if (request.is404) return answerError(reply, noRoute(request.method, request.url));
  });
  fastify.removeAllContentTypeParsers();
  const options = { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES } as const;
  fastify.addContentTypeParser('application/json', options, (request, body: string, done) => {
    const parsed = isUtf8(request.headers['content-type']) ? parseJsonBody(body) : UNREADABLE;
    if (parsed === UNREADABLE) (request as GatewayRequest).unreadableBody = true;
    done(null, parsed === UNREADABLE ? undefined : parsed);
  });
  fastify.addContentTypeParser(
    'application/x-www-form-urlencoded',
    options,
    (_, body: string, done) => done(null, parseFormBody(body)),
  );
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
}

/** Runs after the bearer and rate-limit guards: answers a body the parser could not read. */
@Injectable()
export class UnreadableBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest<GatewayRequest>().unreadableBody) throw unreadableBody();
    return true;
  }
}
