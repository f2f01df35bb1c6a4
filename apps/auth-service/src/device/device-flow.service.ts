import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type {
  DeviceAuthorization,
  DeviceTokenResult,
  DeviceVerifyRequest,
  DeviceVerifyResult,
  RequestContext,
} from '@pgcloud/contracts';
import { DomainError, newId } from '@pgcloud/contracts';
import { isUniqueViolation } from '@pgcloud/postgres';
import { DataSource, MoreThan, Repository } from 'typeorm';
import { AuthServiceConfig } from '../config.js';
import { TokensService } from '../tokens/tokens.service.js';
import { UserEntity } from '../users/user.entity.js';
import { UsersService, toUser } from '../users/users.service.js';
import {
  formatUserCode,
  generateDeviceCode,
  generateUserCode,
  normalizeUserCode,
  sha256,
} from './codes.js';
import type { DeviceFlow } from './device-flow.js';
import { DeviceRequestEntity, WrongCodeAttemptEntity } from './device-request.entity.js';

/** RFC 8628: each slow_down adds five seconds to the interval. */
const SLOW_DOWN_STEP_SECONDS = 5;
/** The first key of the advisory lock a client IP's wrong codes are counted under. */
const WRONG_CODE_LOCK = 'auth.wrong-codes';

/** The OAuth device flow with the local identity provider. */
@Injectable()
export class DeviceFlowService implements DeviceFlow {
  private readonly logger = new Logger(DeviceFlowService.name);

  constructor(
    @InjectRepository(DeviceRequestEntity)
    private readonly requests: Repository<DeviceRequestEntity>,
    @InjectRepository(WrongCodeAttemptEntity)
    private readonly wrongCodes: Repository<WrongCodeAttemptEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
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
    return this.dataSource.transaction(async (manager) => {
      const request = await manager.findOne(DeviceRequestEntity, {
        where: { deviceCodeHash: sha256(deviceCode) },
        lock: { mode: 'pessimistic_write' },
      });
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
      await manager.update(
        DeviceRequestEntity,
        { id: request.id },
        { lastPolledAt: now, intervalSeconds },
      );
      if (tooSoon) return { status: 'slow_down', interval: intervalSeconds };

      switch (request.status) {
        case 'pending':
          return { status: 'pending' };
        case 'denied':
          throw new DomainError('ACCESS_DENIED', 'The sign-in request was denied.');
        case 'approved': {
          const user = await manager.findOneByOrFail(UserEntity, { id: request.userId ?? '' });
          const accessToken = await this.tokens.issue(manager, user.id);
          await manager.update(DeviceRequestEntity, { id: request.id }, { status: 'exchanged' });
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
    const request = userCode
      ? await this.requests.findOneBy({ userCode, status: 'pending' })
      : null;
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
      await this.requests.update({ id: request.id, status: 'pending' }, { status: 'denied' });
      this.logger.log(`device request denied`);
      return { outcome: 'denied', login: form.login };
    }
    const user = await this.users.signInLocal(form.login, form.email);
    const result = await this.requests.update(
      { id: request.id, status: 'pending' },
      { status: 'approved', userId: user.id },
    );
    if (result.affected !== 1)
      throw new DomainError('DEVICE_CODE_INVALID', 'That code was already used.');
    this.logger.log(`device request approved for ${user.id}`);
    return { outcome: 'approved', login: user.login };
  }

  /**
   * Counts a wrong code against its client IP, or refuses it once the limit is reached.
   * Count and insert happen under a lock per IP, so parallel wrong codes cannot all pass
   * the count before any is recorded; the lock ends with the transaction. The two-key
   * lock keeps these apart from other advisory locks on the metadata database.
   */
  private recordWrongCode(clientIp: string): Promise<void> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [
        WRONG_CODE_LOCK,
        clientIp,
      ]);
      await this.refuseWhenTooManyWrongCodes(
        clientIp,
        manager.getRepository(WrongCodeAttemptEntity),
      );
      await manager.insert(WrongCodeAttemptEntity, { clientIp });
    });
  }

  private async refuseWhenTooManyWrongCodes(
    clientIp: string,
    wrongCodes: Repository<WrongCodeAttemptEntity> = this.wrongCodes,
  ): Promise<void> {
    const windowMs = this.config.DEVICE_WRONG_CODE_WINDOW_SECONDS * 1000;
    const since = new Date(Date.now() - windowMs);
    const attempts = await wrongCodes.find({
      where: { clientIp, attemptedAt: MoreThan(since) },
      order: { attemptedAt: 'ASC' },
      take: this.config.DEVICE_WRONG_CODE_LIMIT,
    });
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
