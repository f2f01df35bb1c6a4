import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { BODY_LIMIT_BYTES, noRoute, unreadableBody } from '@pgcloud/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { answerError } from './answer-error.js';
import type { GatewayRequest } from './request-context.js';

/**
 * Why a body was refused, as its 400 says it: broken JSON (a body cut off mid-way among
 * others), JSON that is not an object, or a body of a type the gateway does not read.
 */
export const BODY_PROBLEMS = {
  json: 'must be valid JSON in UTF-8',
  object: 'must be a JSON object',
  type: 'must be sent as application/json',
} as const;
export type BodyProblem = keyof typeof BODY_PROBLEMS;

/** True when a Content-Type names no charset or UTF-8, the only one a JSON body is read in. */
export function isUtf8(contentType: string | undefined): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/**
 * A JSON body as the API reads it: an object, or no body at all when it holds nothing but
 * white space. Anything else is refused, never taken for an absent body: a route whose body
 * is optional would otherwise do its default (a restore in place) for a body cut short.
 */
export function parseJsonBody(text: string): { body: Record<string, unknown> } | BodyProblem {
  if (!/\S/.test(text)) return { body: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'json';
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? { body: value as Record<string, unknown> }
    : 'object';
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
 * The bodies the gateway reads: JSON objects and forms (the device page), up to 64 KiB (413
 * PAYLOAD_TOO_LARGE above it, before anything else), on known routes only: a request no
 * route takes is 404 before its body is read. A body of bytes that is not a JSON object in
 * UTF-8 or a form (no Content-Type, text/plain, broken JSON, an array) is only noted on the
 * request, so it is answered in the API's order of checks: after the rate limit and
 * authentication (401), as a validation error (400), before any route looks for what it
 * names. No bytes at all, whatever the type, is no body.
 */
export function addBodyParsers(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request, reply) => {
    if (request.is404) return answerError(reply, noRoute(request.method, request.url));
  });
  fastify.removeAllContentTypeParsers();
  const options = { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES } as const;
  const refuse = (request: FastifyRequest, problem: BodyProblem): undefined => {
    (request as GatewayRequest).unreadableBody = problem;
    return undefined;
  };
  fastify.addContentTypeParser('application/json', options, (request, text: string, done) => {
    const parsed = isUtf8(request.headers['content-type']) ? parseJsonBody(text) : 'json';
    done(null, typeof parsed === 'string' ? refuse(request, parsed) : parsed.body);
  });
  fastify.addContentTypeParser(
    'application/x-www-form-urlencoded',
    options,
    (_, text: string, done) => done(null, parseFormBody(text)),
  );
  fastify.addContentTypeParser('*', options, (request, text: string, done) =>
    done(null, text.length === 0 ? undefined : refuse(request, 'type')),
  );
}

/** Runs after the bearer and rate-limit guards: answers a body the parser could not read. */
@Injectable()
export class UnreadableBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const problem = context.switchToHttp().getRequest<GatewayRequest>().unreadableBody;
    if (problem) throw unreadableBody(BODY_PROBLEMS[problem]);
    return true;
  }
}
