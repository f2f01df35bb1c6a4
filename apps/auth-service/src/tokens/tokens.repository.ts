import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Tier } from '@pgcloud/contracts';
import type { PreparedStatement } from '@pgcloud/postgres';
import { queryPrepared } from '@pgcloud/postgres';
import { DataSource, IsNull, MoreThan } from 'typeorm';
import type { EntityManager, FindOptionsWhere } from 'typeorm';
import { AccessTokenEntity } from './access-token.entity.js';

/** A transaction's handle, for the repository methods that run inside a caller's transaction. */
export type Transaction = EntityManager;

/** A token that is not revoked, by its hash, with its user. */
const LIVE_TOKEN: PreparedStatement = {
  name: 'auth.live-token',
  text: `SELECT t.id AS token_id, t.expires_at, u.id, u.identity_id, u.login, u.email, u.tier
           FROM auth.access_tokens t JOIN auth.users u ON u.id = t.user_id
          WHERE t.token_hash = $1 AND t.revoked_at IS NULL`,
};

/** A row as `findUnrevoked` selects it: the token and its user. */
export interface LiveTokenRow {
  token_id: string;
  expires_at: Date;
  id: string;
  /** bigint, which pg answers as text. */
  identity_id: string;
  login: string;
  email: string;
  tier: Tier;
}

/** auth.access_tokens: issued tokens, stored by hash. */
@Injectable()
export class TokensRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Inserts the token within the caller's transaction, or without one in a transaction of
   * its own, and answers the record as stored.
   */
  async insert(token: AccessTokenEntity, manager?: Transaction): Promise<AccessTokenEntity> {
    if (!manager) return this.dataSource.transaction((own) => this.insert(token, own));
    const record = manager.create(AccessTokenEntity, token);
    await manager.insert(AccessTokenEntity, record);
    return record;
  }

  /**
   * Inserts the API key `issue` answers once told how many live API keys the user holds
   * (it throws to refuse). One at a time per user, so two at once cannot both pass the count.
   */
  async insertApiKey(
    userId: string,
    issue: (live: number) => AccessTokenEntity,
  ): Promise<AccessTokenEntity> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `auth.api-keys:${userId}`,
      ]);
      const live = await manager.countBy(AccessTokenEntity, {
        userId,
        kind: 'api_key',
        revokedAt: IsNull(),
        expiresAt: MoreThan(new Date()),
      });
      return this.insert(issue(live), manager);
    });
  }

  /** The user's live tokens, newest first. */
  listLive(userId: string): Promise<AccessTokenEntity[]> {
    return this.dataSource.manager.find(AccessTokenEntity, {
      where: { userId, revokedAt: IsNull(), expiresAt: MoreThan(new Date()) },
      order: { createdAt: 'DESC', id: 'ASC' },
    });
  }

  /**
   * The token with this hash if it is not revoked (expired or not), with its user. Every
   * request a gateway's token cache misses asks this, so it is one prepared statement (two
   * `findOneBy` cost a round trip and a query build each, and a query parsed and planned
   * each time costs PostgreSQL twice the CPU).
   */
  async findUnrevoked(tokenHash: string): Promise<LiveTokenRow | undefined> {
    const [row] = await queryPrepared<LiveTokenRow>(this.dataSource, LIVE_TOKEN, [tokenHash]);
    return row;
  }

  /** Revokes every token of the user not revoked yet; answers how many. */
  revokeAll(userId: string): Promise<number> {
    return this.revokeWhere({ userId, revokedAt: IsNull() });
  }

  /** Revokes the user's token if it is not revoked yet (expired or not); answers how many. */
  revokeUnrevoked(id: string, userId: string): Promise<number> {
    return this.revokeWhere({ id, userId, revokedAt: IsNull() });
  }

  /** Revokes the user's token if it is live (neither revoked nor expired); answers how many. */
  revokeLive(id: string, userId: string): Promise<number> {
    return this.revokeWhere({ id, userId, revokedAt: IsNull(), expiresAt: MoreThan(new Date()) });
  }

  /**
   * Writes when each token was last used, in one statement; a token keeps a later use
   * already written.
   */
  async recordLastUse(used: ReadonlyMap<string, Date>): Promise<void> {
    await this.dataSource.query(
      `UPDATE auth.access_tokens t SET last_used_at = u.at
         FROM unnest($1::text[], $2::timestamptz[]) AS u (id, at)
        WHERE t.id = u.id AND (t.last_used_at IS NULL OR t.last_used_at < u.at)`,
      [[...used.keys()], [...used.values()].map((at) => at.toISOString())],
    );
  }

  /** Deletes the tokens that expired or were revoked before `before`; answers how many. */
  async deleteExpiredOrRevokedBefore(before: Date): Promise<number> {
    const result = await this.dataSource
      .createQueryBuilder()
      .delete()
      .from(AccessTokenEntity)
      .where('expires_at < :before OR revoked_at < :before', { before })
      .execute();
    return result.affected ?? 0;
  }

  private async revokeWhere(where: FindOptionsWhere<AccessTokenEntity>): Promise<number> {
    const moved = await this.dataSource.manager.update(AccessTokenEntity, where, {
      revokedAt: new Date(),
    });
    return moved.affected ?? 0;
  }
}
