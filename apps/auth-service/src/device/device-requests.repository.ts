import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThan } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { DeviceRequestEntity, WrongCodeAttemptEntity } from './device-request.entity.js';

/** The first key of the advisory lock a client IP's wrong codes are counted under. */
const WRONG_CODE_LOCK = 'auth.wrong-codes';

/** A new device request's row; created_at is the database's. */
export type NewDeviceRequest = Omit<DeviceRequestEntity, 'createdAt'>;

/** The device flow's records: auth.device_requests and auth.wrong_code_attempts. */
@Injectable()
export class DeviceRequestsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Inserts the request; a unique violation when its device code or user_code is taken. */
  async insert(request: NewDeviceRequest): Promise<void> {
    await this.dataSource.manager.insert(DeviceRequestEntity, request);
  }

  /**
   * Runs `work` in one transaction on the request with this device code hash (null when
   * there is none), holding the request's row lock until the transaction ends: polls of one
   * request take turns, so the exchange for a token happens once. `work` passes `manager`
   * to the methods that run inside the transaction.
   */
  withLocked<T>(
    deviceCodeHash: string,
    work: (request: DeviceRequestEntity | null, manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const request = await manager.findOne(DeviceRequestEntity, {
        where: { deviceCodeHash },
        lock: { mode: 'pessimistic_write' },
      });
      return work(request, manager);
    });
  }

  /** Writes a poll's time and the interval the client is to keep, in `withLocked`'s transaction. */
  async recordPoll(
    id: string,
    lastPolledAt: Date,
    intervalSeconds: number,
    manager: EntityManager,
  ): Promise<void> {
    await manager.update(DeviceRequestEntity, { id }, { lastPolledAt, intervalSeconds });
  }

  /** Marks the request exchanged for a token, in `withLocked`'s transaction. */
  async markExchanged(id: string, manager: EntityManager): Promise<void> {
    await manager.update(DeviceRequestEntity, { id }, { status: 'exchanged' });
  }

  /** The pending request with this user_code. */
  findPending(userCode: string): Promise<DeviceRequestEntity | null> {
    return this.dataSource.manager.findOneBy(DeviceRequestEntity, { userCode, status: 'pending' });
  }

  /** Denies the request if it is still pending. */
  async deny(id: string): Promise<void> {
    await this.dataSource.manager.update(
      DeviceRequestEntity,
      { id, status: 'pending' },
      { status: 'denied' },
    );
  }

  /** Approves the request for the user if it is still pending; false when it was not. */
  async approve(id: string, userId: string): Promise<boolean> {
    const result = await this.dataSource.manager.update(
      DeviceRequestEntity,
      { id, status: 'pending' },
      { status: 'approved', userId },
    );
    return result.affected === 1;
  }

  /**
   * The client IP's wrong codes of the last `windowMs`, oldest first, at most `limit` of
   * them; within the caller's transaction when given one.
   */
  recentWrongCodes(
    clientIp: string,
    windowMs: number,
    limit: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<WrongCodeAttemptEntity[]> {
    const since = new Date(Date.now() - windowMs);
    return manager.find(WrongCodeAttemptEntity, {
      where: { clientIp, attemptedAt: MoreThan(since) },
      order: { attemptedAt: 'ASC' },
      take: limit,
    });
  }

  /**
   * Records a wrong code of the client IP once `allowed` (told the IP's wrong codes as
   * `recentWrongCodes` answers them) has not thrown. Count and insert happen under a lock
   * per IP, so parallel wrong codes cannot all pass the count before any is recorded; the
   * lock ends with the transaction. The two-key lock keeps these apart from other advisory
   * locks on the metadata database.
   */
  insertWrongCode(
    clientIp: string,
    windowMs: number,
    limit: number,
    allowed: (recent: WrongCodeAttemptEntity[]) => void,
  ): Promise<void> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [
        WRONG_CODE_LOCK,
        clientIp,
      ]);
      allowed(await this.recentWrongCodes(clientIp, windowMs, limit, manager));
      await manager.insert(WrongCodeAttemptEntity, { clientIp });
    });
  }

  /** Deletes the requests that expired before `before`, whatever their status; answers how many. */
  async deleteExpiredBefore(before: Date): Promise<number> {
    const result = await this.dataSource
      .createQueryBuilder()
      .delete()
      .from(DeviceRequestEntity)
      .where('expires_at < :before', { before })
      .execute();
    return result.affected ?? 0;
  }

  /** Deletes the wrong codes entered before `before`; answers how many. */
  async deleteWrongCodesBefore(before: Date): Promise<number> {
    const result = await this.dataSource
      .createQueryBuilder()
      .delete()
      .from(WrongCodeAttemptEntity)
      .where('attempted_at < :before', { before })
      .execute();
    return result.affected ?? 0;
  }
}
