import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import { DomainError, newId } from '@pgcloud/contracts';
import type { EntityManager } from 'typeorm';
import { IsNull, Repository } from 'typeorm';
import { AuthServiceConfig } from '../config.js';
import { generateAccessToken, looksLikeAccessToken, sha256 } from '../device/codes.js';
import { UserEntity } from '../users/user.entity.js';
import { toUser } from '../users/users.service.js';
import { AccessTokenEntity } from './access-token.entity.js';

const DAY_MS = 86_400_000;

/** Access tokens: issued once per device request, checked by hash, revoked on logout. */
@Injectable()
export class TokensService {
  constructor(
    @InjectRepository(AccessTokenEntity) private readonly tokens: Repository<AccessTokenEntity>,
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
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

  async verify(token: string): Promise<AuthenticatedUser> {
    const refused = new DomainError('AUTH_REQUIRED', 'The access token is not valid.');
    if (!looksLikeAccessToken(token)) throw refused;
    const record = await this.tokens.findOneBy({ tokenHash: sha256(token), revokedAt: IsNull() });
    if (!record || record.expiresAt.getTime() <= Date.now()) throw refused;
    const user = await this.users.findOneBy({ id: record.userId });
    if (!user) throw refused;
    return { ...toUser(user), tier: user.tier, token_id: record.id };
  }

  async revoke(userId: string, tokenId: string): Promise<{ revoked: true }> {
    await this.tokens.update(
      { id: tokenId, userId, revokedAt: IsNull() },
      { revokedAt: new Date() },
    );
    return { revoked: true };
  }
}
