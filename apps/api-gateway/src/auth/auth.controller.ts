import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import type {
  AuthenticatedUser,
  DeviceAuthorization,
  DeviceStartRequest,
  DeviceTokenResult,
  LogoutRequest,
  RequestContext,
  UserProfile,
} from '@pgcloud/contracts';
import { AUTH_PATTERNS, DeviceTokenDto } from '@pgcloud/contracts';
import { ServiceClients } from '../clients/service-clients.js';
import { GatewayConfig } from '../config.js';
import type { GatewayRequest } from '../http/request-context.js';
import { Ctx, CurrentUser, clientIp } from '../http/request-context.js';
import { Public } from '../http/route-flags.js';
import { TokenCache } from './token-cache.js';

/** Sign-in by device flow, the current user, sign-out. */
@Controller('auth')
export class AuthController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly cache: TokenCache,
    private readonly config: GatewayConfig,
  ) {}

  @Public()
  @Post('device')
  @HttpCode(200)
  startDevice(
    @Ctx() ctx: RequestContext,
    @Req() req: GatewayRequest,
  ): Promise<DeviceAuthorization> {
    const payload: DeviceStartRequest = { client_ip: clientIp(req, this.config.TRUST_PROXY) };
    return this.clients.auth.send(AUTH_PATTERNS.startDevice, ctx, payload);
  }

  @Public()
  @Post('device/token')
  @HttpCode(200)
  pollDevice(@Ctx() ctx: RequestContext, @Body() body: DeviceTokenDto): Promise<DeviceTokenResult> {
    return this.clients.auth.send(AUTH_PATTERNS.pollDevice, ctx, body);
  }

  @Get('me')
  me(@Ctx() ctx: RequestContext): Promise<UserProfile> {
    return this.clients.auth.send(AUTH_PATTERNS.me, ctx, {});
  }

  @Post('logout')
  @HttpCode(200)
  async logout(
    @Ctx() ctx: RequestContext,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<{ revoked: true }> {
    const payload: LogoutRequest = { token_id: user.token_id };
    const result = await this.clients.auth.send<{ revoked: true }>(
      AUTH_PATTERNS.logout,
      ctx,
      payload,
    );
    this.cache.forgetTokenId(user.token_id);
    return result;
  }
}
