import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import { Catch, HttpException, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { DomainError } from '@pgcloud/contracts';
import { withRequestId } from '@pgcloud/observability';
import { errorAnswer } from './error-response.js';
import type { HasRequestId } from './request-id.middleware.js';
import { pathOf } from './request-id.middleware.js';

/** The answer to a body that could not be read, saying why (`reason`). */
export function unreadableBody(reason = 'must be valid JSON or form data'): DomainError {
  return new DomainError('VALIDATION_ERROR', 'The request body could not be read.', [
    { field: 'body', message: reason },
  ]);
}

/** The answer to a path whose percent-encoding is broken (`%`, `%zz`): no name can be read. */
export function unreadablePath(): DomainError {
  return new DomainError('VALIDATION_ERROR', 'The request path could not be read.', [
    { field: 'path', message: 'must be valid percent-encoded UTF-8' },
  ]);
}

/**
 * Express answers a path parameter it cannot decode with a URIError of status 400 (which
 * Nest hands on as a BadRequestException caused by it); Fastify with FST_ERR_BAD_URL.
 * Neither is about the body.
 */
function badPath(exception: unknown): boolean {
  const { code, cause } = (exception ?? {}) as { code?: unknown; cause?: unknown };
  return exception instanceof URIError || cause instanceof URIError || code === 'FST_ERR_BAD_URL';
}

/** The answer to a request no route takes. */
export function noRoute(method: string, url: string | undefined): DomainError {
  return new DomainError('NOT_FOUND', `There is no route ${method} ${pathOf(url)}.`);
}

/**
 * The HTTP status of what the HTTP server itself refused before a route ran: Nest's
 * HttpException, or an error of the server with a `statusCode` (Fastify's, for a URL it
 * cannot decode or a body over its limit).
 */
function serverStatus(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  const status = (exception as { statusCode?: unknown } | undefined)?.statusCode;
  return exception instanceof Error && typeof status === 'number' ? status : undefined;
}

/**
 * Turns anything thrown into the error envelope with the status of its code, written through
 * Nest's HTTP adapter (Express in the local daemon, Fastify in the gateway).
 */
@Catch()
@Injectable()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrorFilter');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<HasRequestId & { originalUrl?: string }>();
    const res: unknown = host.switchToHttp().getResponse();
    const answer = errorAnswer(this.toDomainError(exception, req));
    const adapter = this.adapterHost.httpAdapter;
    for (const [name, value] of Object.entries(answer.headers)) adapter.setHeader(res, name, value);
    adapter.reply(res, answer.body, answer.status);
  }

  private toDomainError(
    exception: unknown,
    req: HasRequestId & { originalUrl?: string },
  ): DomainError {
    if (exception instanceof DomainError) return exception;
    const url = req.originalUrl ?? req.url;
    const status = serverStatus(exception);
    if (status === 404) return noRoute(req.method, url);
    if (status === 413)
      return new DomainError('PAYLOAD_TOO_LARGE', 'The request body is larger than 64 KiB.');
    if (status === 400 && badPath(exception)) return unreadablePath();
    if (status === 400 || status === 415) return unreadableBody();
    const detail = exception instanceof Error ? exception.stack : String(exception);
    withRequestId(req.requestId, () =>
      this.logger.error(`${req.method} ${pathOf(url)} failed: ${detail}`),
    );
    return new DomainError('INTERNAL_ERROR', 'An unexpected error occurred.');
  }
}
