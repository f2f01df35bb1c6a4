import type { ReceiverLeases } from '../archive/receiver-leases.repository.js';

// A receiver stops writing when its lease has less than this left.
const LEASE_MARGIN_SECONDS = 2;

/** Why a receiver's run ended without an error. */
export type RunEnd = 'stop' | 'restart';

/**
 * Whether a receiver may still write: its lease has a few seconds left and its archive is
 * the one it started on (the same receiver_generation). Checked before every upload, so a
 * replica that lost the lease never overwrites what the new holder stored.
 */
export class LeaseFence {
  constructor(
    private readonly databaseId: string,
    private readonly workerId: string,
    private readonly leases: ReceiverLeases,
    readonly generation: number,
  ) {}

  /** Undefined while it may write; else how its run should end. */
  async check(): Promise<RunEnd | undefined> {
    const standing = await this.leases.standing(
      this.databaseId,
      this.workerId,
      LEASE_MARGIN_SECONDS,
    );
    if (!standing || !standing.safe) return 'stop';
    return standing.generation === this.generation ? undefined : 'restart';
  }
}
