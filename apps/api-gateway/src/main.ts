import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadSocketTimeouts } from '@pgcloud/config';
import { applySocketTimeouts } from '@pgcloud/http';
import { createLogger } from '@pgcloud/observability';
import { AppModule } from './app.module.js';
import { loadConfig } from './config.js';
import { addBodyParsers } from './http/body-parsing.js';
import { edgeHeaders } from './http/edge-headers.js';
import { gatewayHttpServer } from './http/http-server.js';
import { addHostCheck } from './http/host-check.js';
import { addHttpMetrics } from './http/http-metrics.js';
import { addRequestDeadline } from './http/request-deadline.js';
import { addRequestIds } from './http/request-ids.js';
import { buildOpenApiDocument, serveOpenApi } from './openapi/openapi.js';
import { addDocumentationRateLimit } from './rate-limit/documentation-rate-limit.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';

const config = loadConfig();
const app = await NestFactory.create<NestFastifyApplication>(
  AppModule.forRoot(config),
  gatewayHttpServer(config.PUBLIC_BASE_URL, config.servedHostNames),
  { bodyParser: false, logger: createLogger('api-gateway', config) },
);
const fastify = app.getHttpAdapter().getInstance();
// Timing and request ids first, so every answer, refusals included, is counted and has an
// id; the deadline from the moment the request arrived; then the headers, and the Host
// before any route (docs/api/errors.md#the-edge: DNS rebinding never reaches a route).
addHttpMetrics(fastify);
addRequestIds(fastify);
addRequestDeadline(fastify, config.RPC_TIMEOUT_MS);
fastify.addHook('onRequest', edgeHeaders(config.PUBLIC_BASE_URL));
addHostCheck(fastify, config.servedHostNames);
addDocumentationRateLimit(fastify, app.get(RateLimiter));
addBodyParsers(fastify);
serveOpenApi(app, buildOpenApiDocument(app));
app.enableShutdownHooks();
// Slow clients are cut off: a socket is held for no longer than a request may take.
applySocketTimeouts(app.getHttpServer(), loadSocketTimeouts());
await app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
new Logger('Bootstrap').log(`api-gateway is listening on ${await app.getUrl()}`);
