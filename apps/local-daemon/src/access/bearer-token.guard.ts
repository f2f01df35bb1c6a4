import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { DomainError } from '@pgcloud/contracts';
import type { Request } from 'express';
import { AccessToken } from './access-token.js';

/** Every route needs the daemon's token (docs/api/local-daemon.md). */
@Injectable()
export class BearerTokenGuard implements CanActivate {
  constructor(private readonly token: AccessToken) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    if (this.token.accepts(req.headers.authorization)) return true;
    throw new DomainError(
      'AUTH_REQUIRED',
      "Send the daemon's token as 'Authorization: Bearer <token>'; it is in the daemon's token file.",
    );
  }
}
