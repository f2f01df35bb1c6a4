/** Message patterns answered by auth-service. */
export const AUTH_PATTERNS = {
  /** Start a device request: DeviceStartRequest -> DeviceAuthorization. */
  startDevice: 'auth.device.start',
  /** Poll a device request: DeviceTokenDto -> DeviceTokenResult. */
  pollDevice: 'auth.device.token',
  /** The person's answer on the verification page: DeviceVerifyDto -> DeviceVerifyResult. */
  verifyDevice: 'auth.device.verify',
  /** Check a bearer token: VerifyTokenRequest -> AuthenticatedUser. */
  verifyToken: 'auth.token.verify',
  /** The calling user with created_at: {} -> UserProfile. */
  me: 'auth.me',
  /** Revoke the calling token: LogoutRequest -> {revoked: true}. */
  logout: 'auth.logout',
  /** The tiers of users, for rules that run without a request: UserTiersRequest -> {tiers}. */
  tiers: 'auth.users.tiers',
} as const;
