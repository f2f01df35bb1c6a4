import type {
  DeviceAuthorization,
  DeviceTokenResult,
  DeviceVerifyRequest,
  DeviceVerifyResult,
  RequestContext,
} from '@pgcloud/contracts';

/**
 * The device flow of the configured identity provider. An
 * abstract class rather than an interface so Nest can inject it by this token.
 */
export abstract class DeviceFlow {
  /** A new device request: the codes the client shows and polls with. */
  abstract start(ctx: RequestContext): Promise<DeviceAuthorization>;

  /** One poll of the client: pending, slow_down, or our access token. */
  abstract poll(ctx: RequestContext, deviceCode: string): Promise<DeviceTokenResult>;

  /** The person's answer on the /device page. */
  abstract verify(ctx: RequestContext, form: DeviceVerifyRequest): Promise<DeviceVerifyResult>;
}
