import { Controller, Logger } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type {
  DeviceStartRequest,
  DeviceVerifyRequest,
  LogoutRequest,
  UserTiersRequest,
  VerifyTokenRequest,
} from '@pgcloud/contracts';
import { AUTH_PATTERNS, DeviceTokenDto, DomainError, RequestContext } from '@pgcloud/contracts';
import { MessageBody, MessageCtx } from '@pgcloud/messaging';
import { DeviceFlow } from './device/device-flow.js';
import { TokensService } from './tokens/tokens.service.js';
import { UsersService } from './users/users.service.js';

/** Message handlers of auth-service. */
@Controller()
export class AuthController {
  private readonly logger = new Logger(AuthController.name);

  constructor(
    private readonly deviceFlow: DeviceFlow,
    private readonly tokens: TokensService,
    private readonly users: UsersService,
  ) {}

  @MessagePattern(AUTH_PATTERNS.startDevice)
  startDevice(@MessageCtx() ctx: RequestContext, @MessageBody() _body: DeviceStartRequest) {
    return this.deviceFlow.start(ctx);
  }

  @MessagePattern(AUTH_PATTERNS.pollDevice)
  pollDevice(@MessageCtx() ctx: RequestContext, @MessageBody() body: DeviceTokenDto) {
    return this.deviceFlow.poll(ctx, body.device_code);
  }

  @MessagePattern(AUTH_PATTERNS.verifyDevice)
  verifyDevice(@MessageCtx() ctx: RequestContext, @MessageBody() body: DeviceVerifyRequest) {
    return this.deviceFlow.verify(ctx, body);
  }

  @MessagePattern(AUTH_PATTERNS.verifyToken)
  verifyToken(@MessageCtx() ctx: RequestContext, @MessageBody() body: VerifyTokenRequest) {
    // Each lookup is logged, so an operator sees a flood of made-up tokens reach this far.
    this.logger.debug(`[${ctx.requestId}] token lookup`);
    return this.tokens.verify(String(body.token));
  }

  @MessagePattern(AUTH_PATTERNS.me)
  me(@MessageCtx() ctx: RequestContext) {
    return this.users.profile(signedIn(ctx));
  }

  @MessagePattern(AUTH_PATTERNS.tiers)
  tiers(@MessageBody() body: UserTiersRequest) {
    return this.users.tiers(Array.isArray(body.user_ids) ? body.user_ids.map(String) : []);
  }

  @MessagePattern(AUTH_PATTERNS.logout)
  logout(@MessageCtx() ctx: RequestContext, @MessageBody() body: LogoutRequest) {
    return this.tokens.revoke(signedIn(ctx), String(body.token_id));
  }
}

function signedIn(ctx: RequestContext): string {
  if (!ctx.userId) throw new DomainError('AUTH_REQUIRED', 'This operation needs a signed-in user.');
  return ctx.userId;
}
