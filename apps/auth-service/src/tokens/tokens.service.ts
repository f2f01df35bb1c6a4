import { Injectable } from '@nestjs/common';
import type {
  AuthenticatedUser,
  CreateTokenDto,
  CreatedApiKey,
  Deleted,
  LoggedOut,
  TokenInfo,
  TokenKind,
  TokenList,
} from '@pgcloud/contracts';
import { API_KEY_DAYS, API_KEY_LIMIT, DomainError, isId, newId } from '@pgcloud/contracts';
import { AuthServiceConfig } from '../config.js';
import { generateAccessToken, looksLikeAccessToken, sha256 } from '../device/codes.js';
import type { AccessTokenEntity } from './access-token.entity.js';
import { TokenUsage } from './token-usage.js';
import type { Transaction } from './tokens.repository.js';
import { TokensRepository } from './tokens.repository.js';

const DAY_MS = 86_400_000;

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
    private readonly tokens: TokensRepository,
    private readonly usage: TokenUsage,
    private readonly config: AuthServiceConfig,
  ) {}

  /**
   * The token of a device sign-in, written within the caller's transaction when given one;
   * the plain token is returned once.
   */
  async issue(userId: string, manager?: Transaction): Promise<string> {
    const token = generateAccessToken();
    await this.tokens.insert(
      newRecord(token, userId, {
        kind: 'device',
        name: 'device sign-in',
        days: this.config.TOKEN_TTL_DAYS,
      }),
      manager,
    );
    return token;
  }

  /** A new API key; QUOTA_EXCEEDED when the user holds API_KEY_LIMIT live ones already. */
  async createApiKey(userId: string, request: CreateTokenDto): Promise<CreatedApiKey> {
    const token = generateAccessToken();
    const record = await this.tokens.insertApiKey(userId, (live) => {
      if (live >= API_KEY_LIMIT)
        throw new DomainError(
          'QUOTA_EXCEEDED',
          `A user holds at most ${API_KEY_LIMIT} live API keys; revoke one first.`,
        );
      return newRecord(token, userId, {
        kind: 'api_key',
        name: request.name,
        days: request.expires_in_days ?? API_KEY_DAYS.default,
      });
    });
    return { ...toTokenInfo(record, undefined), token };
  }

  /** The user's live tokens, newest first; `currentId` is the calling one. */
  async list(userId: string, currentId: string): Promise<TokenList> {
    const live = await this.tokens.listLive(userId);
    return { tokens: live.map((record) => toTokenInfo(record, currentId)) };
  }

  /** The user holding a live token; every request a gateway's token cache misses asks this. */
  async verify(token: string): Promise<AuthenticatedUser> {
    const refused = new DomainError('AUTH_REQUIRED', 'The access token is not valid.');
    if (!looksLikeAccessToken(token)) throw refused;
    const row = await this.tokens.findUnrevoked(sha256(token));
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
    const count = all
      ? await this.tokens.revokeAll(userId)
      : await this.tokens.revokeUnrevoked(tokenId, userId);
    return { revoked: true, count };
  }

  /** Revokes one live token of the user; TOKEN_NOT_FOUND for any other id. */
  async revoke(userId: string, tokenId: string): Promise<Deleted> {
    const moved = isId('tok', tokenId) ? await this.tokens.revokeLive(tokenId, userId) : 0;
    if (moved !== 1) throw new DomainError('TOKEN_NOT_FOUND', `No live token ${tokenId} of yours.`);
    return { id: tokenId, deleted: true };
  }
}

/** A new token's record: only the SHA-256 of the token is stored. */
function newRecord(token: string, userId: string, issuing: Issuing): AccessTokenEntity {
  return {
    id: newId('tok'),
    tokenHash: sha256(token),
    userId,
    kind: issuing.kind,
    name: issuing.name,
    createdAt: new Date(),
    lastUsedAt: null,
    expiresAt: new Date(Date.now() + issuing.days * DAY_MS),
    revokedAt: null,
  };
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
