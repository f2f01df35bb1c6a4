import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { UserEntity } from './user.entity.js';

/** A new user's row; created_at is the database's. */
export type NewUser = Omit<UserEntity, 'createdAt'>;

/** auth.users: the people who signed in, and the sequence of local identity ids. */
@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  find(id: string): Promise<UserEntity | null> {
    return this.dataSource.manager.findOneBy(UserEntity, { id });
  }

  /** The user, failing when there is none; within the caller's transaction when given one. */
  get(id: string, manager: EntityManager = this.dataSource.manager): Promise<UserEntity> {
    return manager.findOneByOrFail(UserEntity, { id });
  }

  /** The users with this id: none or one. */
  listById(id: string): Promise<UserEntity[]> {
    return this.dataSource.manager.findBy(UserEntity, { id });
  }

  /** The users whose login is this one, in any case. */
  listByLogin(login: string): Promise<UserEntity[]> {
    return this.dataSource.manager
      .createQueryBuilder(UserEntity, 'u')
      .where('lower(u.login) = lower(:login)', { login })
      .getMany();
  }

  /** The local user whose login is this one, in any case. */
  findLocal(login: string): Promise<UserEntity | null> {
    return this.dataSource.manager
      .createQueryBuilder(UserEntity, 'u')
      .where(`u.identity_provider = 'local' AND lower(u.login) = lower(:login)`, { login })
      .getOne();
  }

  findByIdentity(identityProvider: string, identityId: number): Promise<UserEntity | null> {
    return this.dataSource.manager.findOneBy(UserEntity, { identityProvider, identityId });
  }

  /** The user of this identity, failing when there is none. */
  getByIdentity(identityProvider: string, identityId: number): Promise<UserEntity> {
    return this.dataSource.manager.findOneByOrFail(UserEntity, { identityProvider, identityId });
  }

  /** The next identity_id of a local user. */
  async nextLocalIdentityId(): Promise<number> {
    const rows = await this.dataSource.query<{ id: string }[]>(
      `SELECT nextval('auth.local_identity_id_seq') AS id`,
    );
    return Number(rows[0]?.id);
  }

  /** Inserts the user; a unique violation when its id, local login or identity is taken. */
  async insert(user: NewUser): Promise<void> {
    await this.dataSource.manager.insert(
      UserEntity,
      this.dataSource.manager.create(UserEntity, user),
    );
  }

  async update(
    id: string,
    changes: Partial<Pick<UserEntity, 'login' | 'email' | 'tier'>>,
  ): Promise<void> {
    await this.dataSource.manager.update(UserEntity, { id }, changes);
  }

  /** The tiers of these users, by id; users that are gone are left out. */
  tiers(userIds: string[]): Promise<Pick<UserEntity, 'id' | 'tier'>[]> {
    return this.dataSource.manager.find(UserEntity, {
      select: { id: true, tier: true },
      where: { id: In(userIds) },
    });
  }
}
