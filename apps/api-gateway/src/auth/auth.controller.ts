import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type {
  AuthenticatedUser,
  DeviceStartRequest,
  DeviceTokenResult,
  RequestContext,
} from '@pgcloud/contracts';
import {
  API_KEY_LIMIT,
  AUTH_PATTERNS,
  CreatedApiKey,
  CreateTokenDto,
  Deleted,
  DeviceAuthorization,
  DeviceToken,
  DeviceTokenDto,
  DeviceTokenPending,
  DeviceTokenSlowDown,
  LoggedOut,
  LogoutQuery,
  TokenList,
  UserProfile,
} from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { GatewayConfig } from '../config.js';
import type { GatewayRequest } from '../http/request-context.js';
import { clientIp } from '../http/client-ip.js';
import { Ctx, CurrentUser } from '../http/request-context.js';
import { Public } from '../http/route-flags.js';
import { ApiEnvelope, ApiErrors } from '../openapi/api-envelope.decorator.js';
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
  @ApiEnvelope(DeviceAuthorization, { status: 200, description: 'The codes to show.' })
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
  @ApiEnvelope([DeviceTokenPending, DeviceTokenSlowDown, DeviceToken], {
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
  @ApiEnvelope(UserProfile, { status: 200, description: 'The user of the token.' })
  @ApiErrors('AUTH_REQUIRED', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  me(@Ctx() ctx: RequestContext): Promise<UserProfile> {
    return this.rpc.call(AUTH_PATTERNS.me, ctx, {});
  }

  @Post('logout')
  @HttpCode(200)
  @ApiBearerAuth()
  @ApiOperation({
    operationId: 'logout',
    summary: 'Revoke the calling token, or with `all=true` every token of the caller',
    description:
      'This gateway refuses the revoked tokens at once, every other gateway within 10 s.',
  })
  @ApiEnvelope(LoggedOut, { status: 200, description: 'The token(s) no longer work.' })
  @ApiErrors('VALIDATION_ERROR', 'AUTH_REQUIRED', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  async logout(
    @Ctx() ctx: RequestContext,
    @CurrentUser() user: AuthenticatedUser,
    @Query() query: LogoutQuery,
  ): Promise<LoggedOut> {
    const all = query.all === true;
    const result = await this.rpc.call(AUTH_PATTERNS.logout, ctx, {
      token_id: user.token_id,
      all,
    });
    if (all) this.cache.forgetUser(user.id);
    else this.cache.forgetTokenId(user.token_id);
    return result;
  }

  @Get('tokens')
  @ApiBearerAuth()
  @ApiOperation({
    operationId: 'listTokens',
    summary: 'List your live tokens, newest first',
    description:
      'Device sign-ins and API keys that are neither revoked nor expired; `current` marks the token of this request. Secrets are never shown again.',
  })
  @ApiEnvelope(TokenList, { status: 200, description: 'The tokens.' })
  @ApiErrors('AUTH_REQUIRED', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  listTokens(
    @Ctx() ctx: RequestContext,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<TokenList> {
    return this.rpc.call(AUTH_PATTERNS.listTokens, ctx, { token_id: user.token_id });
  }

  @Post('tokens')
  @ApiBearerAuth()
  @ApiOperation({
    operationId: 'createToken',
    summary: 'Make an API key for machines',
    description: `A bearer token like a device sign-in's, charged to your rate limit, that expires after \`expires_in_days\` (90 by default). Its secret is in this answer only. At most ${API_KEY_LIMIT} live API keys per user (QUOTA_EXCEEDED).`,
  })
  @ApiEnvelope(CreatedApiKey, { status: 201, description: 'The API key and its secret.' })
  @ApiErrors(
    'VALIDATION_ERROR',
    'AUTH_REQUIRED',
    'QUOTA_EXCEEDED',
    'PAYLOAD_TOO_LARGE',
    'RATE_LIMIT_EXCEEDED',
    'SERVICE_UNAVAILABLE',
  )
  createToken(@Ctx() ctx: RequestContext, @Body() body: CreateTokenDto): Promise<CreatedApiKey> {
    return this.rpc.call(AUTH_PATTERNS.createToken, ctx, body);
  }

  @Delete('tokens/:id')
  @ApiBearerAuth()
  @ApiParam({ name: 'id', type: String, example: 'tok_k3v9x0q2m8t4b7w1c5zd' })
  @ApiOperation({
    operationId: 'revokeToken',
    summary: 'Revoke one of your tokens',
    description:
      "This gateway refuses it at once, every other gateway within 10 s. Another user's token, or one already revoked or expired, is TOKEN_NOT_FOUND.",
  })
  @ApiEnvelope(Deleted, { status: 200, description: 'The token no longer works.' })
  @ApiErrors('AUTH_REQUIRED', 'TOKEN_NOT_FOUND', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  async revokeToken(@Ctx() ctx: RequestContext, @Param('id') id: string): Promise<Deleted> {
    const result = await this.rpc.call(AUTH_PATTERNS.revokeToken, ctx, { id });
    this.cache.forgetTokenId(result.id);
    return result;
  }
}
