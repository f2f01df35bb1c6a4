import type { FastifyInstance } from 'fastify';
import type { GatewayRequest } from './request-context.js';

/**
 * Gives each request, as it arrives, the moment it is answered at the latest: RPC_TIMEOUT_MS
 * later. Every service the request asks, the token check included, shares that time, and
 * each passes on less to the services it asks in turn (docs/api/errors.md#timeouts, "timeouts
 * nest"), so a 503 from here means no service started the work.
 */
export function addRequestDeadline(fastify: FastifyInstance, timeoutMs: number): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    (request as GatewayRequest).deadline = Date.now() + timeoutMs;
    done();
  });
}
