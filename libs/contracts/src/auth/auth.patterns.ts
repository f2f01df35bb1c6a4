import { EmptyDto, rpc } from '../catalogue.js';
import type { Tier } from '../context.js';
import { DeviceTokenDto } from './auth.dto.js';
import {
  DeviceStartRequest,
  DeviceVerifyRequest,
  LogoutRequest,
  UserTiersRequest,
  VerifyTokenRequest,
} from './auth.messages.js';
import type {
  AuthenticatedUser,
  DeviceAuthorization,
  DeviceTokenResult,
  DeviceVerifyResult,
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
  /** Revoke the calling token. */
  logout: rpc<LogoutRequest, { revoked: true }>('auth', 'auth.logout', LogoutRequest),
  /** The tiers of users, for rules that run without a request. */
  tiers: rpc<UserTiersRequest, { tiers: Record<string, Tier> }>(
    'auth',
    'auth.users.tiers',
    UserTiersRequest,
    ['backup-service'],
  ),
} as const;
