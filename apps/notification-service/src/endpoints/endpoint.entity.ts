import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A webhook endpoint of a project (docs/api/webhooks.md). */
@Entity({ schema: 'notifications', name: 'endpoints' })
export class EndpointEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'project_id', type: 'text' })
  projectId: string;

  @Column({ type: 'text' })
  url: string;

  /** Event types, or `*` for all of them. */
  @Column({ type: 'text', array: true })
  events: string[];

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  /** Why pgcloud disabled it, when it did. */
  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason: string | null;

  /** The signing secret, sealed for this endpoint (signing/webhook-secret.ts). */
  @Column({ name: 'secret_sealed', type: 'text' })
  secretSealed: string;

  /** The secret before the last rotation, sealed, signing beside it until previousSecretUntil. */
  @Column({ name: 'previous_secret_sealed', type: 'text', nullable: true })
  previousSecretSealed: string | null;

  @Column({ name: 'previous_secret_until', type: 'timestamptz', nullable: true })
  previousSecretUntil: Date | null;

  /** When the attempts that have all failed since the last success began. */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
