import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type {
  CreatedApiKey,
  DeviceAuthorization,
  DeviceTokenResult,
  LoggedOut,
  TokenInfo,
  TokenKind,
  TokenList,
  User,
  UserProfile,
} from '@pgcloud/contracts';

/** A user as the API shows it. */
@ApiSchema({ name: 'User' })
export class UserModel implements User {
  @ApiProperty({ example: 'user_k3v9x0q2m8t4b7w1c5zd', pattern: '^user_[0-9a-z]{20}$' })
  id: string;

  @ApiProperty({ type: 'integer', example: 1, description: 'Id at the identity provider.' })
  identity_id: number;

  @ApiProperty({ example: 'ada' })
  login: string;

  @ApiProperty({ example: 'ada@localhost' })
  email: string;
}

/** GET /auth/me: the user with the time of the first sign-in. */
@ApiSchema({ name: 'UserProfile' })
export class UserProfileModel extends UserModel implements UserProfile {
  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** POST /auth/device: the codes of a new device request (RFC 8628). */
@ApiSchema({ name: 'DeviceAuthorization' })
export class DeviceAuthorizationModel implements DeviceAuthorization {
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

type Pending = Extract<DeviceTokenResult, { status: 'pending' }>;
type SlowDown = Extract<DeviceTokenResult, { status: 'slow_down' }>;
type Issued = Extract<DeviceTokenResult, { access_token: string }>;

/** POST /auth/device/token while the person has not answered yet. */
@ApiSchema({ name: 'DeviceTokenPending' })
export class DeviceTokenPendingModel implements Pending {
  @ApiProperty({ enum: ['pending'] })
  status: 'pending';
}

/** POST /auth/device/token polled faster than the interval, which grew by 5 s. */
@ApiSchema({ name: 'DeviceTokenSlowDown' })
export class DeviceTokenSlowDownModel implements SlowDown {
  @ApiProperty({ enum: ['slow_down'] })
  status: 'slow_down';

  @ApiProperty({ type: 'integer', example: 10, description: 'The new polling interval (s).' })
  interval: number;
}

/** POST /auth/device/token once approved: the access token, handed out once. */
@ApiSchema({ name: 'DeviceToken' })
export class DeviceTokenModel implements Issued {
  @ApiProperty({ description: '`pgc_` and 40 base62 characters.' })
  access_token: string;

  @ApiProperty({ enum: ['Bearer'] })
  token_type: 'Bearer';

  @ApiProperty({ type: UserModel })
  user: UserModel;
}

/** POST /auth/logout: the calling token, or every token of the caller, is revoked. */
@ApiSchema({ name: 'Logout' })
export class LogoutModel implements LoggedOut {
  @ApiProperty({ type: Boolean, enum: [true] })
  revoked: true;

  @ApiProperty({ type: 'integer', example: 1, description: 'Tokens revoked by this call.' })
  count: number;
}

/** One live token of the caller; its secret is never shown again. */
@ApiSchema({ name: 'Token' })
export class TokenModel implements TokenInfo {
  @ApiProperty({ example: 'tok_k3v9x0q2m8t4b7w1c5zd', pattern: '^tok_[0-9a-z]{20}$' })
  id: string;

  @ApiProperty({ example: 'ci-deploy', description: "An API key's name, or `device sign-in`." })
  name: string;

  @ApiProperty({ enum: ['device', 'api_key'] })
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
@ApiSchema({ name: 'TokenList' })
export class TokenListModel implements TokenList {
  @ApiProperty({ type: [TokenModel] })
  tokens: TokenModel[];
}

/** POST /auth/tokens: the new API key, with its secret shown this once. */
@ApiSchema({ name: 'CreatedApiKey' })
export class CreatedApiKeyModel extends TokenModel implements CreatedApiKey {
  @ApiProperty({
    description: '`pgc_` and 40 base62 characters; shown once, send it as a bearer token.',
  })
  token: string;
}
