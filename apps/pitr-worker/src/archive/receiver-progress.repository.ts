import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { WalReceiverState } from '@pgcloud/contracts';
import { queryRows } from '@pgcloud/postgres';
import { DataSource } from 'typeorm';
import { RECEIVER_ACTIVE } from './archive.entity.js';

/** What one flush interval of a receiver brought to S3. */
export interface ReceiverFlush {
  status: WalReceiverState;
  /** Everything below is in S3. */
  archivedLsn: bigint;
  lastWalFile: string | null;
  /** The newest time the archive now covers, if it covers a new one. */
  windowTo: Date | null;
  /** WAL bytes put in S3 this interval; any counts as the newest WAL's arrival. */
  bytesReceived: number;
}

/**
 * What a running receiver writes on its archive's row: each write only while `workerId`
 * holds the lease of a receiver that should run, so a replica that lost it changes nothing.
 */
@Injectable()
export class ReceiverProgress {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Shows a state, unless the receiver was restarted (a new generation) or is not ours. */
  async showStatus(
    databaseId: string,
    workerId: string,
    status: WalReceiverState,
    generation?: number,
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives SET receiver_status = $3
        WHERE database_id = $1 AND lease_owner = $2 AND ${RECEIVER_ACTIVE}
          AND ($4::integer IS NULL OR receiver_generation = $4)`,
      [databaseId, workerId, status, generation ?? null],
    );
  }

  /** Counts a failed pg_receivewal and shows `error`. */
  async recordFailure(databaseId: string, workerId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives SET receiver_status = 'error', receiver_errors = receiver_errors + 1
        WHERE database_id = $1 AND lease_owner = $2 AND ${RECEIVER_ACTIVE}`,
      [databaseId, workerId],
    );
  }

  /**
   * Records a flush interval, while the lease has not run out and the generation is the
   * one the receiver started on; false when it was not (restarted, disabled, paused or
   * taken over meanwhile). The window's `to` never moves back.
   */
  async recordFlush(
    databaseId: string,
    workerId: string,
    generation: number,
    flush: ReceiverFlush,
  ): Promise<boolean> {
    const rows = await queryRows<{ database_id: string }>(
      this.dataSource,
      `UPDATE pitr.archives
          SET receiver_status = $4, archived_lsn = $5, last_wal_file = $6,
              window_to = GREATEST(window_to, $7::timestamptz),
              latest_wal_time = CASE WHEN $8 THEN now() ELSE latest_wal_time END,
              bytes_received = bytes_received + $9
        WHERE database_id = $1 AND lease_owner = $2 AND receiver_generation = $3
          AND lease_expires_at > now() AND ${RECEIVER_ACTIVE}
       RETURNING database_id`,
      [
        databaseId,
        workerId,
        generation,
        flush.status,
        flush.archivedLsn.toString(),
        flush.lastWalFile,
        flush.windowTo,
        flush.bytesReceived > 0,
        flush.bytesReceived,
      ],
    );
    return rows.length > 0;
  }

  /** Forgets the archive's position and window, so the starter begins a new archive. */
  async forgetPosition(databaseId: string, workerId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives
          SET start_lsn = NULL, timeline = NULL, archived_lsn = NULL, base_backup_id = NULL,
              window_to = NULL, latest_wal_time = NULL, keep_from = NULL, last_wal_file = NULL,
              enabled_at = now()
        WHERE database_id = $1 AND lease_owner = $2 AND enabled`,
      [databaseId, workerId],
    );
  }

  /** The archive's receiver_generation; undefined when the row is gone. */
  async generation(databaseId: string): Promise<number | undefined> {
    const [row] = await queryRows<{ generation: number }>(
      this.dataSource,
      `SELECT receiver_generation AS generation FROM pitr.archives WHERE database_id = $1`,
      [databaseId],
    );
    return row?.generation;
  }
}
