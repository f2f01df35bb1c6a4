import { DomainError } from '@pgcloud/contracts';
import { pathOf } from '@pgcloud/http';
import type { FastifyInstance } from 'fastify';
import { answerError } from '../http/answer-error.js';
import type { RateLimiter } from './rate-limiter.js';

/** The OpenAPI document and Swagger UI, which Nest does not route. */
const DOCUMENTATION = /^\/(openapi\.json|docs)(\/|$)/i;

/**
 * The client IP's bucket for public routes that Nest does not route (the OpenAPI document
 * and /docs, served by @nestjs/swagger straight on Fastify), where guards never run.
 */
export function addDocumentationRateLimit(fastify: FastifyInstance, limiter: RateLimiter): void {
  fastify.addHook('onRequest', async (request, reply) => {
    if (!DOCUMENTATION.test(pathOf(request.url))) return;
    try {
      await limiter.spend(request, reply, undefined);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return answerError(reply, err);
    }
  });
}
