import type { Tier } from '@pgcloud/contracts';
import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A person who signed in through an identity provider. */
@Entity({ schema: 'auth', name: 'users' })
export class UserEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'identity_provider', type: 'text' })
  identityProvider: string;

  @Column({
    name: 'identity_id',
    type: 'bigint',
    transformer: { to: (v: number) => v, from: (v: string) => Number(v) },
  })
  identityId: number;

  @Column({ type: 'text' })
  login: string;

  @Column({ type: 'text' })
  email: string;

  @Column({ type: 'text' })
  tier: Tier;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
