import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { hostCheck, requestIdMiddleware } from '@pgcloud/http';
import { createLogger } from '@pgcloud/observability';
import { AppModule } from './app.module.js';
import { loadConfig } from './config.js';
import { edgeHeaders } from './http/edge-headers.js';
import { httpMetrics } from './http/http-metrics.js';
import { requestDeadline } from './http/request-deadline.js';
import { buildOpenApiDocument, serveOpenApi } from './openapi/openapi.js';
import { ipRateLimitMiddleware } from './rate-limit/rate-limit.middleware.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';

const config = loadConfig();
const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
  bodyParser: false,
  logger: createLogger('api-gateway', config),
});
// Timing first, so refusals count too; request ids next, so every answer has one, and the
// deadline from the moment the request arrived; then the headers, and the Host before
// routing (spec/decisions.md section 11: DNS rebinding never reaches a route).
app.use(httpMetrics());
app.use(requestIdMiddleware);
app.use(requestDeadline(config.RPC_TIMEOUT_MS));
app.use(edgeHeaders(config.PUBLIC_BASE_URL));
app.use(
  hostCheck(
    config.servedHostNames,
    'This gateway does not answer for that host name. Use the address in PUBLIC_BASE_URL.',
  ),
);
app.disable('x-powered-by');
// Answers are no-store and nobody asks for them conditionally: no ETag (a hash of each body).
app.set('etag', false);
app.use(['/openapi.json', '/docs'], ipRateLimitMiddleware(app.get(RateLimiter)));
serveOpenApi(app, buildOpenApiDocument(app));
app.enableShutdownHooks();
await app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
new Logger('Bootstrap').log(`api-gateway is listening on ${await app.getUrl()}`);
