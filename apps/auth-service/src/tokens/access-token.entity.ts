import type { TokenKind } from '@pgcloud/contracts';
import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An issued access token; only the SHA-256 of the token is stored. */
@Entity({ schema: 'auth', name: 'access_tokens' })
export class AccessTokenEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'token_hash', type: 'text' })
  tokenHash: string;

  @Column({ name: 'user_id', type: 'text' })
  userId: string;

  /** What the user called it (API keys), or `device sign-in`. */
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  kind: TokenKind;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Written in batches (TokenUsage), so it lags by up to a minute. */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
