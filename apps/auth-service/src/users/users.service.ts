import { Injectable, Logger } from '@nestjs/common';
import type { Tier, User, UserProfile } from '@pgcloud/contracts';
import { DomainError, isId, newId } from '@pgcloud/contracts';
import { isUniqueViolation } from '@pgcloud/postgres';
import type { UserEntity } from './user.entity.js';
import type { NewUser } from './users.repository.js';
import { UsersRepository } from './users.repository.js';

/** Users: first sign-in, profile, tier. */
@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);

  constructor(private readonly users: UsersRepository) {}

  /**
   * The local user with this login, made at its first sign-in with the next sequential
   * identity_id; a later sign-in keeps the id and takes a newly given email.
   */
  async signInLocal(login: string, email: string | undefined): Promise<UserEntity> {
    const existing = await this.users.findLocal(login);
    if (existing) {
      if (email && email !== existing.email) await this.users.update(existing.id, { email });
      return this.users.get(existing.id);
    }
    const identityId = await this.users.nextLocalIdentityId();
    const user: NewUser = {
      id: newId('user'),
      identityProvider: 'local',
      identityId,
      login,
      email: email ?? `${login.toLowerCase()}@localhost`,
      tier: 'free',
    };
    try {
      await this.users.insert(user);
    } catch (err) {
      // Two first sign-ins of one login at once: the other one won.
      if (isUniqueViolation(err)) return this.findLocalOrFail(login);
      throw err;
    }
    this.logger.log(`new local user ${user.id} (identity_id ${user.identityId})`);
    return this.users.get(user.id);
  }

  /**
   * The user of an external identity provider, keyed by (provider, identity_id): made at
   * its first sign-in; a later sign-in keeps the id and takes the provider's login and email.
   */
  async signInExternal(
    provider: string,
    identityId: number,
    login: string,
    email: string,
  ): Promise<UserEntity> {
    const existing = await this.users.findByIdentity(provider, identityId);
    if (existing) return this.refreshIdentity(existing, login, email);
    const user: NewUser = {
      id: newId('user'),
      identityProvider: provider,
      identityId,
      login,
      email,
      tier: 'free',
    };
    try {
      await this.users.insert(user);
    } catch (err) {
      // Two first sign-ins of one identity at once: the other one made the row.
      if (!isUniqueViolation(err)) throw err;
      const winner = await this.users.getByIdentity(provider, identityId);
      return this.refreshIdentity(winner, login, email);
    }
    this.logger.log(`new ${provider} user ${user.id} (identity_id ${identityId})`);
    return this.users.get(user.id);
  }

  async profile(userId: string): Promise<UserProfile> {
    const user = await this.users.find(userId);
    if (!user) throw new DomainError('AUTH_REQUIRED', 'The signed-in user no longer exists.');
    return { ...toUser(user), created_at: user.createdAt.toISOString() };
  }

  /** The tiers of these users (for other services' rules, such as backup expiry). */
  async tiers(userIds: string[]): Promise<{ tiers: Record<string, Tier> }> {
    const rows = await this.users.tiers(userIds);
    return { tiers: Object.fromEntries(rows.map((row) => [row.id, row.tier])) };
  }

  /** Sets the tier of a user named by id or login (the operator's admin command). */
  async setTier(userIdOrLogin: string, tier: Tier): Promise<UserEntity> {
    const matches = isId('user', userIdOrLogin)
      ? await this.users.listById(userIdOrLogin)
      : await this.users.listByLogin(userIdOrLogin);
    const [user, other] = matches;
    if (!user) throw new Error(`no user with id or login "${userIdOrLogin}"`);
    if (other)
      throw new Error(`several users have the login "${userIdOrLogin}"; name one by its id`);
    await this.users.update(user.id, { tier });
    return this.users.get(user.id);
  }

  private async refreshIdentity(
    user: UserEntity,
    login: string,
    email: string,
  ): Promise<UserEntity> {
    if (user.login === login && user.email === email) return user;
    await this.users.update(user.id, { login, email });
    return this.users.get(user.id);
  }

  private async findLocalOrFail(login: string): Promise<UserEntity> {
    const user = await this.users.findLocal(login);
    if (!user) throw new Error(`local user ${login} vanished`);
    return user;
  }
}

/** A user as the API shows it. */
export function toUser(user: UserEntity): User {
  return { id: user.id, identity_id: user.identityId, login: user.login, email: user.email };
}
