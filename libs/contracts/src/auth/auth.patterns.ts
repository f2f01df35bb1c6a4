import { EmptyDto, rpc } from '../catalogue.js';
import type { Tier } from '../context.js';
import { CreateTokenDto, DeviceTokenDto } from './auth.dto.js';
import {
  CallingToken,
  DeviceStartRequest,
  DeviceVerifyRequest,
  LogoutRequest,
  RevokeTokenRequest,
  UserTiersRequest,
  VerifyTokenRequest,
} from './auth.messages.js';
import type { Deleted } from '../projects/projects.types.js';
import type {
  AuthenticatedUser,
  CreatedApiKey,
  DeviceAuthorization,
  DeviceTokenResult,
  DeviceVerifyResult,
  LoggedOut,
  TokenList,
  UserProfile,
} from './auth.types.js';

/** Message patterns answered by auth-service. */
export const AUTH_PATTERNS = {
  /** Start a device request. */
  startDevice: rpc<DeviceStartRequest, DeviceAuthorization>(
    'auth',
    'auth.device.start',
    DeviceStartRequest,
  ),
  /** Poll a device request. */
  pollDevice: rpc<DeviceTokenDto, DeviceTokenResult>('auth', 'auth.device.token', DeviceTokenDto),
  /** The person's answer on the verification page. */
  verifyDevice: rpc<DeviceVerifyRequest, DeviceVerifyResult>(
    'auth',
    'auth.device.verify',
    DeviceVerifyRequest,
  ),
  /** Check a bearer token. */
  verifyToken: rpc<VerifyTokenRequest, AuthenticatedUser>(
    'auth',
    'auth.token.verify',
    VerifyTokenRequest,
  ),
  /** The calling user with created_at. */
  me: rpc<EmptyDto, UserProfile>('auth', 'auth.me', EmptyDto),
  /** Revoke the calling token, or every token of the caller. */
  logout: rpc<LogoutRequest, LoggedOut>('auth', 'auth.logout', LogoutRequest),
  /** The caller's live tokens, the calling one marked. */
  listTokens: rpc<CallingToken, TokenList>('auth', 'auth.tokens.list', CallingToken),
  /** A new API key of the caller, its secret shown once. */
  createToken: rpc<CreateTokenDto, CreatedApiKey>('auth', 'auth.tokens.create', CreateTokenDto),
  /** Revoke one token of the caller. */
  revokeToken: rpc<RevokeTokenRequest, Deleted>('auth', 'auth.tokens.revoke', RevokeTokenRequest),
  /** The tiers of users, for rules that run without a request. */
  tiers: rpc<UserTiersRequest, { tiers: Record<string, Tier> }>(
    'auth',
    'auth.users.tiers',
    UserTiersRequest,
    ['backup-service', 'database-provisioner'],
  ),
} as const;
