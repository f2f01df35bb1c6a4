import type { DomainError } from '@pgcloud/contracts';
import { hostRefusal } from '@pgcloud/http';
import type { FastifyInstance } from 'fastify';
import { answerError } from './answer-error.js';

/**
 * Refuses, before any route runs (docs/api/errors.md#the-edge: DNS rebinding never
 * reaches a route), a request whose Host is not a loopback name or one of `names`.
 */
export function addHostCheck(fastify: FastifyInstance, names: Iterable<string>): void {
  const refusal = gatewayHostRefusal(names);
  fastify.addHook('onRequest', async (request, reply) => {
    const error = refusal(request.headers.host);
    if (error) return answerError(reply, error);
  });
}

/** The gateway's answer to a Host it does not serve, undefined for one it does. */
export function gatewayHostRefusal(
  names: Iterable<string>,
): (host: string | undefined) => DomainError | undefined {
  return hostRefusal(
    names,
    'This gateway does not answer for that host name. Use the address in PUBLIC_BASE_URL.',
  );
}
