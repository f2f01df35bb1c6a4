import { Controller, Logger } from '@nestjs/common';
import {
  AUTH_PATTERNS,
  CallingToken,
  CreateTokenDto,
  DeviceStartRequest,
  DeviceTokenDto,
  DeviceVerifyRequest,
  DomainError,
  LogoutRequest,
  RequestContext,
  RevokeTokenRequest,
  UserTiersRequest,
  VerifyTokenRequest,
} from '@pgcloud/contracts';
import { Handles, MessageBody, MessageCtx } from '@pgcloud/messaging';
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

  @Handles(AUTH_PATTERNS.startDevice)
  startDevice(@MessageCtx() ctx: RequestContext, @MessageBody() _body: DeviceStartRequest) {
    return this.deviceFlow.start(ctx);
  }

  @Handles(AUTH_PATTERNS.pollDevice)
  pollDevice(@MessageCtx() ctx: RequestContext, @MessageBody() body: DeviceTokenDto) {
    return this.deviceFlow.poll(ctx, body.device_code);
  }

  @Handles(AUTH_PATTERNS.verifyDevice)
  verifyDevice(@MessageCtx() ctx: RequestContext, @MessageBody() body: DeviceVerifyRequest) {
    return this.deviceFlow.verify(ctx, body);
  }

  @Handles(AUTH_PATTERNS.verifyToken)
  verifyToken(@MessageCtx() ctx: RequestContext, @MessageBody() body: VerifyTokenRequest) {
    // Each lookup is logged, so an operator sees a flood of made-up tokens reach this far.
    this.logger.debug(`token lookup`);
    return this.tokens.verify(body.token);
  }

  @Handles(AUTH_PATTERNS.me)
  me(@MessageCtx() ctx: RequestContext) {
    return this.users.profile(signedIn(ctx));
  }

  @Handles(AUTH_PATTERNS.tiers)
  tiers(@MessageBody() body: UserTiersRequest) {
    return this.users.tiers(body.user_ids);
  }

  @Handles(AUTH_PATTERNS.logout)
  logout(@MessageCtx() ctx: RequestContext, @MessageBody() body: LogoutRequest) {
    return this.tokens.logout(signedIn(ctx), body.token_id, body.all === true);
  }

  @Handles(AUTH_PATTERNS.listTokens)
  listTokens(@MessageCtx() ctx: RequestContext, @MessageBody() body: CallingToken) {
    return this.tokens.list(signedIn(ctx), body.token_id);
  }

  @Handles(AUTH_PATTERNS.createToken)
  createToken(@MessageCtx() ctx: RequestContext, @MessageBody() body: CreateTokenDto) {
    return this.tokens.createApiKey(signedIn(ctx), body);
  }

  @Handles(AUTH_PATTERNS.revokeToken)
  revokeToken(@MessageCtx() ctx: RequestContext, @MessageBody() body: RevokeTokenRequest) {
    return this.tokens.revoke(signedIn(ctx), body.id);
  }
}

function signedIn(ctx: RequestContext): string {
  if (!ctx.userId) throw new DomainError('AUTH_REQUIRED', 'This operation needs a signed-in user.');
  return ctx.userId;
}
