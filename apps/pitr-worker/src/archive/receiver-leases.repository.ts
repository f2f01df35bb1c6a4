import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { queryRows } from '@pgcloud/postgres';
import { DataSource } from 'typeorm';
import { RECEIVER_ACTIVE } from './archive.entity.js';

/** A lease this replica holds, and whether its receiver should still run. */
export interface HeldLease {
  databaseId: string;
  active: boolean;
}

/** A lease just claimed; `previous` held it before and stopped renewing. */
export interface ClaimedLease {
  databaseId: string;
  previous: string | null;
}

/** How a receiver's lease stands when it is about to write. */
export interface LeaseStanding {
  /** More than the margin asked for is left. */
  safe: boolean;
  /** The archive's receiver_generation now. */
  generation: number;
}

/**
 * The receivers' leases on pitr.archives (lease_owner, lease_expires_at): which replica
 * runs which database's receiver. Claims and renewals skip rows another transaction holds
 * locked rather than wait for them.
 */
@Injectable()
export class ReceiverLeases {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Renews `workerId`'s leases of receivers that should run for `seconds` from now. */
  async renew(workerId: string, seconds: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives SET lease_expires_at = now() + make_interval(secs => $2)
        WHERE database_id IN (SELECT database_id FROM pitr.archives
                               WHERE lease_owner = $1 AND ${RECEIVER_ACTIVE}
                               FOR UPDATE SKIP LOCKED)`,
      [workerId, seconds],
    );
  }

  async heldBy(workerId: string): Promise<HeldLease[]> {
    const rows = await queryRows<{ database_id: string; active: boolean }>(
      this.dataSource,
      `SELECT database_id, ${RECEIVER_ACTIVE} AS active FROM pitr.archives
        WHERE lease_owner = $1`,
      [workerId],
    );
    return rows.map((r) => ({ databaseId: r.database_id, active: r.active }));
  }

  /**
   * Takes up to `limit` receivers that should run and nobody holds (or whose holder's
   * lease ran out), for `seconds`; each starts afresh: status `starting`, errors and bytes 0.
   */
  async claim(workerId: string, seconds: number, limit: number): Promise<ClaimedLease[]> {
    const rows = await queryRows<{ database_id: string; previous: string | null }>(
      this.dataSource,
      `WITH free AS (
         SELECT database_id, lease_owner FROM pitr.archives
          WHERE ${RECEIVER_ACTIVE} AND (lease_owner IS NULL OR lease_expires_at < now())
          ORDER BY database_id LIMIT $3 FOR UPDATE SKIP LOCKED)
       UPDATE pitr.archives a
          SET lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2),
              receiver_status = 'starting', receiver_started_at = now(), receiver_errors = 0,
              bytes_received = 0
         FROM free WHERE a.database_id = free.database_id
       RETURNING a.database_id, free.lease_owner AS previous`,
      [workerId, seconds, limit],
    );
    return rows.map((r) => ({ databaseId: r.database_id, previous: r.previous }));
  }

  /** Gives a lease back once its receiver should no longer run (PITR off, restoring). */
  async releaseStopped(databaseId: string, workerId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives SET lease_owner = NULL, lease_expires_at = NULL
        WHERE database_id = $1 AND lease_owner = $2 AND NOT (${RECEIVER_ACTIVE})`,
      [databaseId, workerId],
    );
  }

  /** Gives every lease of `workerId` back (it shuts down): another replica takes over at once. */
  async releaseAll(workerId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives SET lease_owner = NULL WHERE lease_owner = $1`,
      [workerId],
    );
  }

  /** Whether `workerId` holds the lease of a receiver that should run. */
  async holds(databaseId: string, workerId: string): Promise<boolean> {
    const rows = await queryRows<{ database_id: string }>(
      this.dataSource,
      `SELECT database_id FROM pitr.archives
        WHERE database_id = $1 AND lease_owner = $2 AND ${RECEIVER_ACTIVE}`,
      [databaseId, workerId],
    );
    return rows.length > 0;
  }

  /**
   * The standing of `workerId`'s lease on a receiver that should run, with `marginSeconds`
   * to spare; undefined when it holds none.
   */
  async standing(
    databaseId: string,
    workerId: string,
    marginSeconds: number,
  ): Promise<LeaseStanding | undefined> {
    const [row] = await queryRows<LeaseStanding>(
      this.dataSource,
      `SELECT lease_expires_at > now() + make_interval(secs => $3) AS safe,
              receiver_generation AS generation
         FROM pitr.archives
        WHERE database_id = $1 AND lease_owner = $2 AND ${RECEIVER_ACTIVE}`,
      [databaseId, workerId, marginSeconds],
    );
    return row;
  }

  /** Whether any replica holds the database's receiver (a lease not run out). */
  async isHeld(databaseId: string): Promise<boolean> {
    const [row] = await queryRows<{ held: boolean }>(
      this.dataSource,
      `SELECT lease_owner IS NOT NULL AND lease_expires_at > now() AS held
         FROM pitr.archives WHERE database_id = $1`,
      [databaseId],
    );
    return row?.held ?? false;
  }
}
