import type { IncomingMessage, ServerResponse } from 'node:http';
import { pathOf } from '@pgcloud/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';

// The HTML pages of the gateway: the verification form (an inline stylesheet, a form posted
// to itself) and Swagger UI (its scripts and styles from /docs, inline styles, data: icons,
// "try it out" requests to this origin).
const HTML_PAGES = /^\/(device|docs)(\/|$)/i; // routes ignore case too (main.ts)

/**
 * The security headers of every gateway answer (docs/api/errors.md#the-edge), through helmet:
 * nosniff and no referrer everywhere; HTML pages get a Content-Security-Policy that lets
 * nothing frame them, the JSON API one that allows nothing at all. Every answer is
 * `Cache-Control: no-store`: most carry a user's data or a secret, and the rest are cheap.
 */
export function edgeHeaders(
  publicBaseUrl: string,
): (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void {
  const common = {
    referrerPolicy: { policy: 'no-referrer' as const },
    xFrameOptions: { action: 'deny' as const },
    // Only where people reach the gateway over HTTPS: HSTS on plain HTTP means nothing.
    strictTransportSecurity: new URL(publicBaseUrl).protocol === 'https:',
  };
  const pages = helmet({
    ...common,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
  });
  const api = helmet({
    ...common,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
    },
  });
  const pageHeaders = headersOf(pages);
  const apiHeaders = headersOf(api);
  return (request, reply, done) => {
    reply.headers(HTML_PAGES.test(pathOf(request.url)) ? pageHeaders : apiHeaders);
    done();
  };
}

/**
 * The headers a helmet middleware sets, with Cache-Control: the same for every answer (no
 * directive here depends on the request), so they are worked out once rather than per
 * request.
 */
function headersOf(middleware: ReturnType<typeof helmet>): Record<string, string> {
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  const response = {
    setHeader: (name: string, value: string) => void (headers[name] = value),
    removeHeader: () => undefined, // X-Powered-By, which nothing here sets
  };
  let failure: unknown;
  middleware({} as IncomingMessage, response as unknown as ServerResponse, (err) => {
    failure = err;
  });
  if (failure) throw failure as Error;
  return headers;
}
