import { LATENCY_BUCKETS_SECONDS, METRICS_PREFIX } from '@pgcloud/observability';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Histogram } from 'prom-client';

/** Requests no route took (404s, refusals before routing): one label for all of them. */
export const UNMATCHED_ROUTE = 'unmatched';

const httpRequestSeconds = new Histogram({
  name: `${METRICS_PREFIX}http_request_duration_seconds`,
  help: 'Time the gateway took to answer an HTTP request, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [...LATENCY_BUCKETS_SECONDS],
});

/** The parts of a request the route label is made of. */
export type RoutedRequest = Pick<FastifyRequest, 'is404'> & { routeOptions: { url?: string } };

/**
 * The route template a request was answered on (`/projects/:projectId`), never its URL,
 * whose ids would make a label value per resource.
 */
export function routeLabel(req: RoutedRequest): string {
  const url = req.routeOptions.url;
  return req.is404 || url === undefined ? UNMATCHED_ROUTE : url;
}

/** Times every request from its arrival to the end of its answer, refusals included. */
export function addHttpMetrics(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    httpRequestSeconds.observe(
      { method: request.method, route: routeLabel(request), status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
