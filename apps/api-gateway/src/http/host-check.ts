import { hostRefusal } from '@pgcloud/http';
import type { FastifyInstance } from 'fastify';
import { answerError } from './answer-error.js';

/**
 * Refuses, before any route runs (spec/decisions.md sections 1 and 11: DNS rebinding never
 * reaches a route), a request whose Host is not a loopback name or one of `names`.
 */
export function addHostCheck(fastify: FastifyInstance, names: Iterable<string>): void {
  const refusal = hostRefusal(
    names,
    'This gateway does not answer for that host name. Use the address in PUBLIC_BASE_URL.',
  );
  fastify.addHook('onRequest', async (request, reply) => {
    const error = refusal(request.headers.host);
    if (error) return answerError(reply, error);
  });
}
