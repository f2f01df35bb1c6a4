import { logAnswered, requestIdFor } from '@pgcloud/http';
import { withRequestId } from '@pgcloud/observability';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayRequest } from './request-context.js';

/**
 * Echoes a well-formed X-Request-Id, or makes one, before anything else can answer, and logs
 * each request once answered (the path only: query strings stay out of logs). The request's
 * hooks and its handler run as part of it, so every line logged meanwhile carries its id:
 * the handler is entered again under the id, as a body read from the socket is not.
 */
export function addRequestIds(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) =>
    withRequestId(assignRequestId(request, reply), done),
  );
  fastify.addHook('preHandler', (request, _reply, done) =>
    withRequestId((request as GatewayRequest).requestId, done),
  );
  fastify.addHook('onResponse', (request, reply, done) => {
    logAnswered(request as GatewayRequest, reply.statusCode, reply.elapsedTime);
    done();
  });
}

/** Gives a request its id, and its answer the X-Request-Id header. */
export function assignRequestId(request: FastifyRequest, reply: FastifyReply): string {
  const req = request as GatewayRequest;
  req.requestId = requestIdFor(req.headers['x-request-id']);
  reply.header('X-Request-Id', req.requestId);
  return req.requestId;
}
