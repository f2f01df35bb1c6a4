import type { ExecutionContext } from '@nestjs/common';
import { createParamDecorator } from '@nestjs/common';
import type { AuthenticatedUser, RequestContext } from '@pgcloud/contracts';
import type { RequestWithId } from '@pgcloud/http';
import type { Request } from 'express';

/** What the gateway keeps on each request. */
export interface GatewayRequest extends RequestWithId {
  user?: AuthenticatedUser;
}

/** The RequestContext of the current request, to send with every message. */
export function contextOf(req: GatewayRequest): RequestContext {
  const user = req.user;
  return user
    ? { requestId: req.requestId, userId: user.id, tier: user.tier }
    : { requestId: req.requestId };
}

/** Injects the RequestContext of the current request. */
export const Ctx = createParamDecorator((_: unknown, host: ExecutionContext) =>
  contextOf(host.switchToHttp().getRequest<GatewayRequest>()),
);

/** Injects the signed-in user (routes behind the bearer guard only). */
export const CurrentUser = createParamDecorator((_: unknown, host: ExecutionContext) => {
  return host.switchToHttp().getRequest<GatewayRequest>().user;
});

/** The client's address: the socket's, or the first X-Forwarded-For hop behind a trusted proxy. */
export function clientIp(req: Request, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return req.socket.remoteAddress ?? 'unknown';
}
