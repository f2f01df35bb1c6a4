import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DomainError } from '@pgcloud/contracts';
import { BODY_LIMIT_BYTES } from '@pgcloud/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerError } from './answer-error.js';
import { edgeHeaders } from './edge-headers.js';
import { gatewayHostRefusal } from './host-check.js';
import { assignRequestId } from './request-ids.js';

/** A path longer than any URL Node's HTTP server takes (its headers are 16 KiB at most). */
const PARAMETER_LENGTH_LIMIT = 16 * 1024;

/**
 * The gateway's HTTP server: Nest on Fastify, whose routing and answers cost a fraction of
 * Express's per request (bench/results/2026-11-27-api-latency.md and
 * 2026-11-27-api-latency-2.md). Routes match as they did on Express: any letter case and an
 * optional trailing slash; a path parameter as long as a URL allows, so an overlong id is the
 * route's validation error rather than a missing route. While the gateway shuts down, a
 * request on an open connection is answered as any other (Fastify would answer its own 503,
 * outside the envelope). The client's address is read by http/client-ip.ts (TRUST_PROXY),
 * never by the server.
 */
export function gatewayHttpServer(
  publicBaseUrl: string,
  servedHostNames: Iterable<string>,
): FastifyAdapter {
  const headers = edgeHeaders(publicBaseUrl);
  const hostRefusal = gatewayHostRefusal(servedHostNames);
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: false,
    // No Nest middleware: the edge is Fastify hooks, and middie's pass per request is saved.
    skipMiddie: true,
    routerOptions: {
      caseSensitive: false,
      ignoreTrailingSlash: true,
      maxParamLength: PARAMETER_LENGTH_LIMIT,
    },
    // The router refuses a path it cannot decode (`/projects/%FF`) before any hook runs:
    // the answer still gets its request id, the edge's headers, a foreign Host's 403 first,
    // and the error envelope.
    frameworkErrors: (_error: Error, request: FastifyRequest, reply: FastifyReply) => {
      assignRequestId(request, reply);
      const error = hostRefusal(request.headers.host) ?? unreadablePath();
      headers(request, reply, () => void answerError(reply, error));
    },
  });
}

function unreadablePath(): DomainError {
  return new DomainError('VALIDATION_ERROR', 'The request path could not be read.', [
    { field: 'path', message: 'must be valid percent-encoded UTF-8' },
  ]);
}
