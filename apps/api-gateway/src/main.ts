import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { logLevels, requestIdMiddleware } from '@pgcloud/http';
import { AppModule } from './app.module.js';
import { loadConfig } from './config.js';
import { buildOpenApiDocument, serveOpenApi } from './openapi/openapi.js';
import { ipRateLimitMiddleware } from './rate-limit/rate-limit.middleware.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';

const config = loadConfig();
const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
  bodyParser: false,
  logger: logLevels(config.LOG_LEVEL),
});
app.use(requestIdMiddleware);
app.disable('x-powered-by');
app.use(['/openapi.json', '/docs'], ipRateLimitMiddleware(app.get(RateLimiter)));
serveOpenApi(app, buildOpenApiDocument(app));
app.enableShutdownHooks();
await app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
new Logger('Bootstrap').log(`api-gateway is listening on ${await app.getUrl()}`);
