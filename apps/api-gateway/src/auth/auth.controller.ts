import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { RpcClient } from '@pgcloud/messaging';
import { GatewayConfig } from '../config.js';
import type { GatewayRequest } from '../http/request-context.js';
import { clientIp } from '../http/client-ip.js';
import { Ctx, CurrentUser } from '../http/request-context.js';
import { Public } from '../http/route-flags.js';
import { ApiEnvelope, ApiErrors } from '../openapi/api-envelope.decorator.js';
import {
  DeviceAuthorizationModel,
  DeviceTokenModel,
  DeviceTokenPendingModel,
  DeviceTokenSlowDownModel,
  LogoutModel,
  UserProfileModel,
} from '../openapi/auth.models.js';
import { TokenCache } from './token-cache.js';

/** Sign-in by device flow, the current user, sign-out. */
@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cache: TokenCache,
    private readonly config: GatewayConfig,
  ) {}

  @Public()
  @Post('device')
  @HttpCode(200)
  @ApiOperation({ operationId: 'startDeviceFlow', summary: 'Start a device sign-in (RFC 8628)' })
  @ApiEnvelope(DeviceAuthorizationModel, { status: 200, description: 'The codes to show.' })
  @ApiErrors('RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  startDevice(
    @Ctx() ctx: RequestContext,
    @Req() req: GatewayRequest,
  ): Promise<DeviceAuthorization> {
    const payload: DeviceStartRequest = { client_ip: clientIp(req, this.config.TRUST_PROXY) };
    return this.rpc.call(AUTH_PATTERNS.startDevice, ctx, payload);
  }

  @Public()
  @Post('device/token')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'pollDeviceToken',
    summary: 'Poll a device sign-in',
    description: 'Poll no faster than `interval`; the token is handed out once.',
  })
  @ApiEnvelope([DeviceTokenPendingModel, DeviceTokenSlowDownModel, DeviceTokenModel], {
    status: 200,
    description: 'Still waiting (`pending`), polled too fast (`slow_down`), or the token.',
  })
  @ApiErrors(
    'VALIDATION_ERROR',
    'DEVICE_CODE_INVALID',
    'DEVICE_CODE_EXPIRED',
    'ACCESS_DENIED',
    'PAYLOAD_TOO_LARGE',
    'RATE_LIMIT_EXCEEDED',
    'SERVICE_UNAVAILABLE',
  )
  pollDevice(@Ctx() ctx: RequestContext, @Body() body: DeviceTokenDto): Promise<DeviceTokenResult> {
    return this.rpc.call(AUTH_PATTERNS.pollDevice, ctx, body);
  }

  @Get('me')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'getCurrentUser', summary: 'The signed-in user' })
  @ApiEnvelope(UserProfileModel, { status: 200, description: 'The user of the token.' })
  @ApiErrors('AUTH_REQUIRED', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  me(@Ctx() ctx: RequestContext): Promise<UserProfile> {
    return this.rpc.call(AUTH_PATTERNS.me, ctx, {});
  }

  @Post('logout')
  @HttpCode(200)
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'logout', summary: 'Revoke the calling token' })
  @ApiEnvelope(LogoutModel, { status: 200, description: 'The token no longer works.' })
  @ApiErrors('AUTH_REQUIRED', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  async logout(
    @Ctx() ctx: RequestContext,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<{ revoked: true }> {
    const payload: LogoutRequest = { token_id: user.token_id };
    const result = await this.rpc.call(AUTH_PATTERNS.logout, ctx, payload);
    this.cache.forgetTokenId(user.token_id);
    return result;
  }
}
