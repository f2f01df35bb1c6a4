import type { ExecutionContext } from '@nestjs/common';
import { createParamDecorator } from '@nestjs/common';
import type { AuthenticatedUser, RequestContext } from '@pgcloud/contracts';
import type { FastifyRequest } from 'fastify';
import type { BodyProblem } from './body-parsing.js';

/** What the gateway keeps on each request (declared on Fastify's requests in http/edge.ts). */
export interface GatewayRequest extends FastifyRequest {
  /** The request's id (http/request-ids.ts), sent with every message and logged. */
  requestId: string;
  user?: AuthenticatedUser;
  /**
   * Set once a token that turned out invalid paid its address's failed-authentication
   * bucket: the IP bucket does not charge the request again.
   */
  chargedToIp?: boolean;
  /**
   * A read whose token is spent while it is answered (rate-limit/overlapped-spend.interceptor.ts):
   * spends it, refusing as the rate-limit guard would.
   */
  deferredSpend?: () => Promise<void>;
  /** Why the body could not be read (http/body-parsing.ts answers it after authentication). */
  unreadableBody?: BodyProblem;
  /** When this request is answered at the latest (http/request-deadline.ts). */
  deadline?: number;
}

/** The RequestContext of the current request, to send with every message. */
export function contextOf(req: GatewayRequest): RequestContext {
  const user = req.user;
  const deadline = req.deadline === undefined ? {} : { deadline: req.deadline };
  return user
    ? { requestId: req.requestId, userId: user.id, tier: user.tier, ...deadline }
    : { requestId: req.requestId, ...deadline };
}

/** Injects the RequestContext of the current request. */
export const Ctx = createParamDecorator((_: unknown, host: ExecutionContext) =>
  contextOf(host.switchToHttp().getRequest<GatewayRequest>()),
);

/** Injects the signed-in user (routes behind the bearer guard only). */
export const CurrentUser = createParamDecorator((_: unknown, host: ExecutionContext) => {
  return host.switchToHttp().getRequest<GatewayRequest>().user;
});
