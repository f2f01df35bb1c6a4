import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** The life of a device request: waiting, answered by the person, then exchanged once. */
export type DeviceRequestStatus = 'pending' | 'approved' | 'denied' | 'exchanged';

/** One device authorization request; the device_code itself is kept only as a hash. */
@Entity({ schema: 'auth', name: 'device_requests' })
export class DeviceRequestEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'device_code_hash', type: 'text' })
  deviceCodeHash: string;

  @Column({ name: 'user_code', type: 'text' })
  userCode: string;

  @Column({ type: 'text' })
  status: DeviceRequestStatus;

  @Column({ name: 'interval_seconds', type: 'integer' })
  intervalSeconds: number;

  @Column({ name: 'last_polled_at', type: 'timestamptz', nullable: true })
  lastPolledAt: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'user_id', type: 'text', nullable: true })
  userId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** A wrong user_code entered on the verification page, counted per client IP. */
@Entity({ schema: 'auth', name: 'wrong_code_attempts' })
export class WrongCodeAttemptEntity {
  @PrimaryColumn({ type: 'bigint', generated: 'increment' })
  id: string;

  @Column({ name: 'client_ip', type: 'text' })
  clientIp: string;

  @CreateDateColumn({ name: 'attempted_at', type: 'timestamptz' })
  attemptedAt: Date;
}
