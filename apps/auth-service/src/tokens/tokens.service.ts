import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type {
  AuthenticatedUser,
  CreateTokenDto,
  CreatedApiKey,
  Deleted,
  LoggedOut,
  Tier,
  TokenInfo,
  TokenKind,
  TokenList,
} from '@pgcloud/contracts';
import { API_KEY_DAYS, API_KEY_LIMIT, DomainError, isId, newId } from '@pgcloud/contracts';
import type { PreparedStatement } from '@pgcloud/postgres';
import { queryPrepared } from '@pgcloud/postgres';
import type { EntityManager } from 'typeorm';
import { IsNull, MoreThan, Repository } from 'typeorm';
import { AuthServiceConfig } from '../config.js';
import { generateAccessToken, looksLikeAccessToken, sha256 } from '../device/codes.js';
import { AccessTokenEntity } from './access-token.entity.js';
import { TokenUsage } from './token-usage.js';

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

/** What a token is, beside its user: its kind, name and lifetime. */
interface Issuing {
  kind: TokenKind;
  name: string;
  days: number;
}

/**
 * Access tokens: one per device sign-in, and API keys users make for machines; checked by
 * hash, listed and revoked by their users (docs/api/auth.md).
 */
@Injectable()
export class TokensService {
  constructor(
    @InjectRepository(AccessTokenEntity) private readonly tokens: Repository<AccessTokenEntity>,
    private readonly usage: TokenUsage,
    private readonly config: AuthServiceConfig,
  ) {}

  /** The token of a device sign-in, written within the caller's transaction; the plain token is returned once. */
  async issue(manager: EntityManager, userId: string): Promise<string> {
    const issued = await this.insert(manager, userId, {
      kind: 'device',
      name: 'device sign-in',
      days: this.config.TOKEN_TTL_DAYS,
    });
    return issued.token;
  }

  private async insert(
    manager: EntityManager,
    userId: string,
    issuing: Issuing,
  ): Promise<{ token: string; record: AccessTokenEntity }> {
    const token = generateAccessToken();
    const record = manager.create(AccessTokenEntity, {
      id: newId('tok'),
      tokenHash: sha256(token),
      userId,
      kind: issuing.kind,
      name: issuing.name,
      createdAt: new Date(),
      lastUsedAt: null,
      expiresAt: new Date(Date.now() + issuing.days * DAY_MS),
      revokedAt: null,
    });
    await manager.insert(AccessTokenEntity, record);
    return { token, record };
  }

  /** A new API key; QUOTA_EXCEEDED when the user holds API_KEY_LIMIT live ones already. */
  async createApiKey(userId: string, request: CreateTokenDto): Promise<CreatedApiKey> {
    return this.tokens.manager.transaction(async (manager) => {
      // One at a time per user, so two at once cannot both pass the count.
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `auth.api-keys:${userId}`,
      ]);
      const live = await manager.countBy(AccessTokenEntity, {
        userId,
        kind: 'api_key',
        revokedAt: IsNull(),
        expiresAt: MoreThan(new Date()),
      });
      if (live >= API_KEY_LIMIT)
        throw new DomainError(
          'QUOTA_EXCEEDED',
          `A user holds at most ${API_KEY_LIMIT} live API keys; revoke one first.`,
        );
      const { token, record } = await this.insert(manager, userId, {
        kind: 'api_key',
        name: request.name,
        days: request.expires_in_days ?? API_KEY_DAYS.default,
      });
      return { ...toTokenInfo(record, undefined), token };
    });
  }

  /** The user's live tokens, newest first; `currentId` is the calling one. */
  async list(userId: string, currentId: string): Promise<TokenList> {
    const live = await this.tokens.find({
      where: { userId, revokedAt: IsNull(), expiresAt: MoreThan(new Date()) },
      order: { createdAt: 'DESC', id: 'ASC' },
    });
    return { tokens: live.map((record) => toTokenInfo(record, currentId)) };
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
    this.usage.record(row.token_id);
    return {
      id: row.id,
      identity_id: Number(row.identity_id),
      login: row.login,
      email: row.email,
      tier: row.tier,
      token_id: row.token_id,
    };
  }

  /** Logout: the calling token, or with `all` every live token of the user. */
  async logout(userId: string, tokenId: string, all: boolean): Promise<LoggedOut> {
    const moved = await this.tokens.update(
      all ? { userId, revokedAt: IsNull() } : { id: tokenId, userId, revokedAt: IsNull() },
      { revokedAt: new Date() },
    );
    return { revoked: true, count: moved.affected ?? 0 };
  }

  /** Revokes one live token of the user; TOKEN_NOT_FOUND for any other id. */
  async revoke(userId: string, tokenId: string): Promise<Deleted> {
    const moved = isId('tok', tokenId)
      ? await this.tokens.update(
          { id: tokenId, userId, revokedAt: IsNull(), expiresAt: MoreThan(new Date()) },
          { revokedAt: new Date() },
        )
      : { affected: 0 };
    if (moved.affected !== 1)
      throw new DomainError('TOKEN_NOT_FOUND', `No live token ${tokenId} of yours.`);
    return { id: tokenId, deleted: true };
  }
}

function toTokenInfo(record: AccessTokenEntity, currentId: string | undefined): TokenInfo {
  return {
    id: record.id,
    name: record.name,
    kind: record.kind,
    created_at: record.createdAt.toISOString(),
    last_used_at: record.lastUsedAt?.toISOString() ?? null,
    expires_at: record.expiresAt.toISOString(),
    current: record.id === currentId,
  };
}
