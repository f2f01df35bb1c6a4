import type { ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import type { GatewayRequest } from '../http/request-context.js';
import { IS_PUBLIC } from '../http/route-flags.js';

/**
 * Finds out who calls, and nothing more: a missing or bad token leaves the request
 * anonymous, so the rate-limit guard can count it against its IP before refusing it.
 * An auth-service that does not answer is SERVICE_UNAVAILABLE, never a 401.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    req.user = undefined;
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic || !req.headers.authorization) return true;
    await super.canActivate(context);
    return true;
  }

  override handleRequest<TUser = AuthenticatedUser>(err: unknown, user: TUser | false): TUser {
    if (err instanceof Error) throw err;
    if (err) throw new Error('bearer authentication failed');
    return (user || undefined) as TUser;
  }
}
