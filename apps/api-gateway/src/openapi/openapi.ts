import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { API_VERSION } from '../health/health.controller.js';

/** The OpenAPI 3 document of every gateway route, read from the controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('pgcloud')
    .setDescription(
      'Managed PostgreSQL. Every JSON answer is an envelope: `{"success": true, "data": …}` ' +
        'or `{"success": false, "error": {"code", "message", "details"?}}` with the HTTP ' +
        'status of its code. Sign in with the device flow (`POST /auth/device`) to get a ' +
        'bearer token.',
    )
    .setVersion(API_VERSION)
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'opaque',
      description: 'An access token (`pgc_`…) from the device flow.',
    })
    .build();
  return SwaggerModule.createDocument(app, config);
}

/**
 * Serves the document at /openapi.json and Swagger UI at /docs (docs/api/README.md).
 * They are plain routes of the HTTP server, outside Nest's guards and interceptor: public
 * and never wrapped in the envelope. The UI's assets come from swagger-ui-dist on disk.
 */
export function serveOpenApi(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    raw: ['json'],
    customSiteTitle: 'pgcloud API',
    // The spec is embedded in the page; never send it to the online validator.
    swaggerOptions: { validatorUrl: 'none' },
  });
}
