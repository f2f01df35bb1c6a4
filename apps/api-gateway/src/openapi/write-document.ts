import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import { GatewayConfig } from '../config.js';
import { gatewayHttpServer } from '../http/http-server.js';
import { buildOpenApiDocument } from './openapi.js';

/**
 * Prints the gateway's OpenAPI document without starting anything: the application is
 * built in preview mode, which reads the controllers' decorators but makes no provider,
 * so no broker, Redis or port is needed. `npm run openapi` writes it beside the generated
 * client (libs/api-client) and the build checks that the two agree.
 */
const config = new GatewayConfig();
const app = await NestFactory.create(
  AppModule.forRoot(config),
  gatewayHttpServer(config.PUBLIC_BASE_URL, config.servedHostNames),
  {
    preview: true,
    logger: false,
  },
);
process.stdout.write(`${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`);
await app.close();
