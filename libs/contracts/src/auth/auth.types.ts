import type { Tier } from '../context.js';

/** A user as the API shows it. */
export interface User {
  id: string;
  identity_id: number;
  login: string;
  email: string;
}

/** GET /auth/me. */
export interface UserProfile extends User {
  created_at: string;
}

/** The caller behind a valid token, as the gateway keeps it for the request. */
export interface AuthenticatedUser extends User {
  tier: Tier;
  token_id: string;
}

/** POST /auth/device. */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  expires_in: number;
  interval: number;
}

/** POST /auth/device/token: waiting, told to slow down, or done. */
export type DeviceTokenResult =
  | { status: 'pending' }
  | { status: 'slow_down'; interval: number }
  | { access_token: string; token_type: 'Bearer'; user: User };

/** What the verification page tells the person. */
export interface DeviceVerifyResult {
  outcome: 'approved' | 'denied';
  login: string;
}

/** How a token came to be: a device sign-in, or an API key made for machines. */
export type TokenKind = 'device' | 'api_key';

/** One live token of the caller (GET /auth/tokens); the secret is never shown again. */
export interface TokenInfo {
  id: string;
  name: string;
  kind: TokenKind;
  created_at: string;
  /** Lags by up to a minute; null when never used. */
  last_used_at: string | null;
  expires_at: string;
  /** The token of the calling request. */
  current: boolean;
}

/** GET /auth/tokens: newest first. */
export interface TokenList {
  tokens: TokenInfo[];
}

/** POST /auth/tokens: the API key, whose `token` is shown this once. */
export interface CreatedApiKey extends TokenInfo {
  token: string;
}

/** POST /auth/logout: how many tokens stopped working. */
export interface LoggedOut {
  revoked: true;
  /** Tokens revoked: 1, or every live one with `all=true`. */
  count: number;
}
