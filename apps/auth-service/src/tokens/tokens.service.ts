import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { AuthenticatedUser, Tier } from '@pgcloud/contracts';
import { DomainError, newId } from '@pgcloud/contracts';
import type { PreparedStatement } from '@pgcloud/postgres';
import { queryPrepared } from '@pgcloud/postgres';
import type { EntityManager } from 'typeorm';
import { IsNull, Repository } from 'typeorm';
import { AuthServiceConfig } from '../config.js';
import { generateAccessToken, looksLikeAccessToken, sha256 } from '../device/codes.js';
import { AccessTokenEntity } from './access-token.entity.js';

const DAY_MS = 86_400_000;

/** A token that is not revoked, by its hash, with its user. */
const LIVE_TOKEN: PreparedStatement = {
  name: 'auth.live-token',
  text: `SELECT t.id AS token_id, t.expires_at, u.id, u.identity_id, u.login, u.email, u.tier
           FROM auth.access_tokens t JOIN auth.users u ON u.id = t.user_id
          WHERE t.token_hash = $1 AND t.revoked_at IS NULL`,
};

interface LiveTokenRow {
  token_id: string;
  expires_at: Date;
  id: string;
  /** bigint, which pg answers as text. */
  identity_id: string;
  login: string;
  email: string;
  tier: Tier;
}

/** Access tokens: issued once per device request, checked by hash, revoked on logout. */
@Injectable()
export class TokensService {
  constructor(
    @InjectRepository(AccessTokenEntity) private readonly tokens: Repository<AccessTokenEntity>,
    private readonly config: AuthServiceConfig,
  ) {}

  /** A new token for the user, written within the caller's transaction; the plain token is returned once. */
  async issue(manager: EntityManager, userId: string): Promise<string> {
    const token = generateAccessToken();
    await manager.insert(AccessTokenEntity, {
      id: newId('tok'),
      tokenHash: sha256(token),
      userId,
      expiresAt: new Date(Date.now() + this.config.TOKEN_TTL_DAYS * DAY_MS),
      revokedAt: null,
    });
    return token;
  }

  /**
   * The user holding a live token. Every request a gateway's token cache misses asks this,
   * so it is one prepared statement (two `findOneBy` cost a round trip and a query build
   * each, and a query parsed and planned each time costs PostgreSQL twice the CPU).
   */
  async verify(token: string): Promise<AuthenticatedUser> {
    const refused = new DomainError('AUTH_REQUIRED', 'The access token is not valid.');
    if (!looksLikeAccessToken(token)) throw refused;
    const [row] = await queryPrepared<LiveTokenRow>(this.tokens.manager.connection, LIVE_TOKEN, [
      sha256(token),
    ]);
    if (!row || row.expires_at.getTime() <= Date.now()) throw refused;
    return {
      id: row.id,
      identity_id: Number(row.identity_id),
      login: row.login,
      email: row.email,
      tier: row.tier,
      token_id: row.token_id,
    };
  }

  async revoke(userId: string, tokenId: string): Promise<{ revoked: true }> {
    await this.tokens.update(
      { id: tokenId, userId, revokedAt: IsNull() },
      { revokedAt: new Date() },
    );
    return { revoked: true };
  }
}
