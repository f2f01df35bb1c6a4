import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AuthServiceConfig } from '../config.js';
import { DeviceRequestsRepository } from '../device/device-requests.repository.js';
import { TokensRepository } from '../tokens/tokens.repository.js';

const DAY_MS = 86_400_000;
/**
 * How long a device request outlives its expiry: a poll soon after still answers
 * DEVICE_CODE_EXPIRED (start again) rather than DEVICE_CODE_INVALID (never heard of it).
 */
export const DEVICE_REQUEST_GRACE_MS = DAY_MS;
/**
 * How long a token outlives its expiry or revocation. Gateways trust a checked token for
 * at most 10 s; a day is far past that, so a revoked token deleted here is one no gateway
 * can still hold, and logout keeps meaning what it says.
 */
export const ACCESS_TOKEN_GRACE_MS = DAY_MS;

/** What one round deleted. */
export interface SweepCounts {
  deviceRequests: number;
  wrongCodes: number;
  accessTokens: number;
}

/**
 * Housekeeping: deletes device requests, wrong-code records and access tokens that can no
 * longer change an answer. Each replica sweeps on its own: plain DELETEs by age, so two
 * rounds at once only find less to do.
 */
@Injectable()
export class AuthSweep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AuthSweep.name);
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly deviceRequests: DeviceRequestsRepository,
    private readonly tokens: TokensRepository,
    private readonly config: AuthServiceConfig,
  ) {}

  onApplicationBootstrap(): void {
    // A round at start as well: replicas restarted more often than the interval still sweep.
    this.runRound();
    this.timer = setInterval(() => this.runRound(), this.config.AUTH_SWEEP_INTERVAL_SECONDS * 1000);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One round: deletes what is past keeping and answers how many rows went. */
  async sweep(): Promise<SweepCounts> {
    const now = Date.now();
    const deviceBefore = new Date(now - DEVICE_REQUEST_GRACE_MS);
    const wrongCodeBefore = new Date(now - this.config.DEVICE_WRONG_CODE_WINDOW_SECONDS * 1000);
    const tokenBefore = new Date(now - ACCESS_TOKEN_GRACE_MS);
    return {
      // Whatever its status: an exchanged or denied request answers the same once expired.
      deviceRequests: await this.deviceRequests.deleteExpiredBefore(deviceBefore),
      wrongCodes: await this.deviceRequests.deleteWrongCodesBefore(wrongCodeBefore),
      accessTokens: await this.tokens.deleteExpiredOrRevokedBefore(tokenBefore),
    };
  }

  private runRound(): void {
    this.sweeping ??= this.sweep()
      .then((counts) => {
        if (counts.deviceRequests + counts.wrongCodes + counts.accessTokens > 0)
          this.logger.log(
            `swept ${counts.deviceRequests} device request(s), ${counts.wrongCodes} ` +
              `wrong-code record(s), ${counts.accessTokens} access token(s)`,
          );
      })
      .catch((err: unknown) => this.logger.warn(`sweep failed, retried next round: ${String(err)}`))
      .finally(() => (this.sweeping = undefined));
  }
}
