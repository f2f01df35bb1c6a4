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
