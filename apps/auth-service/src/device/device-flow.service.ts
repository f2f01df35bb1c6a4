import { Injectable, Logger } from '@nestjs/common';
import type {
  DeviceAuthorization,
  DeviceTokenResult,
  DeviceVerifyRequest,
  DeviceVerifyResult,
  RequestContext,
} from '@pgcloud/contracts';
import { DomainError, newId } from '@pgcloud/contracts';
import { isUniqueViolation } from '@pgcloud/postgres';
import { AuthServiceConfig } from '../config.js';
import { TokensService } from '../tokens/tokens.service.js';
import { UsersRepository } from '../users/users.repository.js';
import { UsersService, toUser } from '../users/users.service.js';
import {
  formatUserCode,
  generateDeviceCode,
  generateUserCode,
  normalizeUserCode,
  sha256,
} from './codes.js';
import type { DeviceFlow } from './device-flow.js';
import type { WrongCodeAttemptEntity } from './device-request.entity.js';
import { DeviceRequestsRepository } from './device-requests.repository.js';

/** RFC 8628: each slow_down adds five seconds to the interval. */
const SLOW_DOWN_STEP_SECONDS = 5;

/** The OAuth device flow with the local identity provider. */
@Injectable()
export class DeviceFlowService implements DeviceFlow {
  private readonly logger = new Logger(DeviceFlowService.name);

  constructor(
    private readonly requests: DeviceRequestsRepository,
    private readonly users: UsersService,
    private readonly userRecords: UsersRepository,
    private readonly tokens: TokensService,
    private readonly config: AuthServiceConfig,
  ) {}

  async start(_ctx: RequestContext): Promise<DeviceAuthorization> {
    const deviceCode = generateDeviceCode();
    for (let attempt = 0; ; attempt++) {
      const userCode = generateUserCode();
      try {
        await this.requests.insert({
          id: newId('dev'),
          deviceCodeHash: sha256(deviceCode),
          userCode,
          status: 'pending',
          intervalSeconds: this.config.DEVICE_POLL_INTERVAL_SECONDS,
          lastPolledAt: null,
          expiresAt: new Date(Date.now() + this.config.DEVICE_CODE_TTL_SECONDS * 1000),
          userId: null,
        });
        this.logger.log(`device request started`);
        return {
          device_code: deviceCode,
          user_code: formatUserCode(userCode),
          verification_uri: new URL('/device', this.config.PUBLIC_BASE_URL).toString(),
          expires_in: this.config.DEVICE_CODE_TTL_SECONDS,
          interval: this.config.DEVICE_POLL_INTERVAL_SECONDS,
        };
      } catch (err) {
        // 20^8 codes make a clash rare; a clash simply draws another.
        if (!isUniqueViolation(err) || attempt >= 4) throw err;
      }
    }
  }

  /** One poll of the client; the row lock makes the exchange for a token happen once. */
  poll(ctx: RequestContext, deviceCode: string): Promise<DeviceTokenResult> {
    return this.requests.withLocked(sha256(deviceCode), async (request, manager) => {
      if (!request || request.status === 'exchanged') {
        throw new DomainError(
          'DEVICE_CODE_INVALID',
          'The device code is unknown or was already used.',
        );
      }
      const now = new Date();
      if (request.expiresAt <= now)
        throw new DomainError('DEVICE_CODE_EXPIRED', 'The device code has expired; start again.');

      const tooSoon =
        request.lastPolledAt !== null &&
        now.getTime() - request.lastPolledAt.getTime() < request.intervalSeconds * 1000;
      const intervalSeconds = tooSoon
        ? request.intervalSeconds + SLOW_DOWN_STEP_SECONDS
        : request.intervalSeconds;
      await this.requests.recordPoll(request.id, now, intervalSeconds, manager);
      if (tooSoon) return { status: 'slow_down', interval: intervalSeconds };

      switch (request.status) {
        case 'pending':
          return { status: 'pending' };
        case 'denied':
          throw new DomainError('ACCESS_DENIED', 'The sign-in request was denied.');
        case 'approved': {
          const user = await this.userRecords.get(request.userId ?? '', manager);
          const accessToken = await this.tokens.issue(user.id, manager);
          await this.requests.markExchanged(request.id, manager);
          this.logger.log(`token issued to ${user.id}`);
          return { access_token: accessToken, token_type: 'Bearer', user: toUser(user) };
        }
      }
    });
  }

  /** The person's answer on the verification page. */
  async verify(ctx: RequestContext, form: DeviceVerifyRequest): Promise<DeviceVerifyResult> {
    // Refused before anything is looked up: once the limit is reached, a right code from
    // that address waits out the window too (a quick check; recordWrongCode is the exact one).
    await this.refuseWhenTooManyWrongCodes(form.client_ip);
    const allowed = this.config.allowedLogins;
    if (allowed && !allowed.has(form.login.toLowerCase())) {
      throw new DomainError('ACCESS_DENIED', `The login "${form.login}" may not sign in here.`);
    }
    const userCode = normalizeUserCode(form.user_code);
    const request = userCode ? await this.requests.findPending(userCode) : null;
    if (!request) {
      await this.recordWrongCode(form.client_ip);
      throw new DomainError(
        'DEVICE_CODE_INVALID',
        'That code is not valid. Check the code your terminal shows.',
      );
    }
    if (request.expiresAt <= new Date()) {
      throw new DomainError(
        'DEVICE_CODE_EXPIRED',
        'That code has expired. Start the sign-in again in your terminal.',
      );
    }
    if (form.action === 'deny') {
      await this.requests.deny(request.id);
      this.logger.log(`device request denied`);
      return { outcome: 'denied', login: form.login };
    }
    const user = await this.users.signInLocal(form.login, form.email);
    if (!(await this.requests.approve(request.id, user.id)))
      throw new DomainError('DEVICE_CODE_INVALID', 'That code was already used.');
    this.logger.log(`device request approved for ${user.id}`);
    return { outcome: 'approved', login: user.login };
  }

  /**
   * Counts a wrong code against its client IP, or refuses it once the limit is reached;
   * the count and the insert are one turn of the IP (DeviceRequestsRepository.insertWrongCode).
   */
  private recordWrongCode(clientIp: string): Promise<void> {
    return this.requests.insertWrongCode(
      clientIp,
      this.config.DEVICE_WRONG_CODE_WINDOW_SECONDS * 1000,
      this.config.DEVICE_WRONG_CODE_LIMIT,
      (attempts) => this.refuseAtLimit(attempts),
    );
  }

  private async refuseWhenTooManyWrongCodes(clientIp: string): Promise<void> {
    this.refuseAtLimit(
      await this.requests.recentWrongCodes(
        clientIp,
        this.config.DEVICE_WRONG_CODE_WINDOW_SECONDS * 1000,
        this.config.DEVICE_WRONG_CODE_LIMIT,
      ),
    );
  }

  /** RATE_LIMIT_EXCEEDED when the IP's wrong codes of the window reach the limit. */
  private refuseAtLimit(attempts: WrongCodeAttemptEntity[]): void {
    const windowMs = this.config.DEVICE_WRONG_CODE_WINDOW_SECONDS * 1000;
    const oldest = attempts[0];
    if (oldest && attempts.length >= this.config.DEVICE_WRONG_CODE_LIMIT) {
      const minutes = Math.ceil((oldest.attemptedAt.getTime() + windowMs - Date.now()) / 60_000);
      throw new DomainError(
        'RATE_LIMIT_EXCEEDED',
        `Too many wrong codes from your address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      );
    }
  }
}
