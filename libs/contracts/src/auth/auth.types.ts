import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Tier } from '../context.js';
import { idSchema } from '../ids.js';

/** A user as the API shows it. */
export class User {
  @ApiProperty(idSchema('user'))
  id: string;

  @ApiProperty({ type: 'integer', example: 1, description: 'Id at the identity provider.' })
  identity_id: number;

  @ApiProperty({ example: 'ada' })
  login: string;

  @ApiProperty({ example: 'ada@localhost' })
  email: string;
}

/** GET /auth/me: the user with the time of the first sign-in. */
export class UserProfile extends User {
  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** The caller behind a valid token, as the gateway keeps it for the request. */
export interface AuthenticatedUser extends User {
  tier: Tier;
  token_id: string;
}

/** POST /auth/device: the codes of a new device request (RFC 8628). */
export class DeviceAuthorization {
  @ApiProperty({ description: 'Secret of this client; poll POST /auth/device/token with it.' })
  device_code: string;

  @ApiProperty({ example: 'BCDF-GHJK', description: 'What the person types at verification_uri.' })
  user_code: string;

  @ApiProperty({ format: 'uri', example: 'http://127.0.0.1:8080/device' })
  verification_uri: string;

  @ApiProperty({ type: 'integer', example: 900, description: 'Seconds the codes stay valid.' })
  expires_in: number;

  @ApiProperty({ type: 'integer', example: 5, description: 'Seconds to wait between polls.' })
  interval: number;
}

/** POST /auth/device/token while the person has not answered yet. */
export class DeviceTokenPending {
  @ApiProperty({ enum: ['pending'] })
  status: 'pending';
}

/** POST /auth/device/token polled faster than the interval, which grew by 5 s. */
export class DeviceTokenSlowDown {
  @ApiProperty({ enum: ['slow_down'] })
  status: 'slow_down';

  @ApiProperty({ type: 'integer', example: 10, description: 'The new polling interval (s).' })
  interval: number;
}

/** POST /auth/device/token once approved: the access token, handed out once. */
export class DeviceToken {
  @ApiProperty({ description: '`pgc_` and 40 base62 characters.' })
  access_token: string;

  @ApiProperty({ enum: ['Bearer'] })
  token_type: 'Bearer';

  @ApiProperty({ type: User })
  user: User;
}

/** POST /auth/device/token: waiting, told to slow down, or done. */
export type DeviceTokenResult = DeviceTokenPending | DeviceTokenSlowDown | DeviceToken;

/** What the verification page tells the person. */
export interface DeviceVerifyResult {
  outcome: 'approved' | 'denied';
  login: string;
}

/** How a token came to be: a device sign-in, or an API key made for machines. */
export const TOKEN_KINDS = ['device', 'api_key'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** One live token of the caller (GET /auth/tokens); its secret is never shown again. */
@ApiSchema({ name: 'Token' })
export class TokenInfo {
  @ApiProperty(idSchema('tok'))
  id: string;

  @ApiProperty({ example: 'ci-deploy', description: "An API key's name, or `device sign-in`." })
  name: string;

  @ApiProperty({ enum: TOKEN_KINDS })
  kind: TokenKind;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'May lag by up to a minute; null when never used.',
  })
  last_used_at: string | null;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;

  @ApiProperty({ description: 'The token of this request.' })
  current: boolean;
}

/** GET /auth/tokens: the caller's live tokens, newest first. */
export class TokenList {
  @ApiProperty({ type: [TokenInfo] })
  tokens: TokenInfo[];
}

/** POST /auth/tokens: the new API key, with its secret shown this once. */
export class CreatedApiKey extends TokenInfo {
  @ApiProperty({
    description: '`pgc_` and 40 base62 characters; shown once, send it as a bearer token.',
  })
  token: string;
}

/** POST /auth/logout: the calling token, or every token of the caller, is revoked. */
@ApiSchema({ name: 'Logout' })
export class LoggedOut {
  @ApiProperty({ type: Boolean, enum: [true] })
  revoked: true;

  /** 1, or every live one with `all=true`. */
  @ApiProperty({ type: 'integer', example: 1, description: 'Tokens revoked by this call.' })
  count: number;
}
