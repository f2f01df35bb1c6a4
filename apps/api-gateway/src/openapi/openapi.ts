import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { API_VERSION } from '../health/health.controller.js';
import { IS_PUBLIC } from '../http/route-flags.js';

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
    // Relative: the deployment that serves this document, whatever its address, so the
    // committed copy (libs/api-client/openapi.json) and /openapi.json are the same document.
    .addServer('/', 'This deployment: the gateway that serves this document.')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'opaque',
      description: 'An access token (`pgc_`…) from the device flow.',
    })
    .build();
  return declarePublicOperations(SwaggerModule.createDocument(app, config));
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * `security: []` on every operation of a `@Public()` route: it needs no token
 * (docs/api/auth.md). The decorator marks it with a requirement named IS_PUBLIC, since the
 * scanner leaves out an empty list; the mark wins over a controller's bearer requirement,
 * as `@Public()` does for the guards.
 */
function declarePublicOperations(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation: OperationObject | undefined = item[method];
      if (operation?.security?.some((requirement) => IS_PUBLIC in requirement))
        operation.security = [];
    }
  }
  return document;
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
