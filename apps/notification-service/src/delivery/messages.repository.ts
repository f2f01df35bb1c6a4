import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { newId } from '@pgcloud/contracts';
import { queryRows } from '@pgcloud/postgres';
import { DataSource } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { KEPT_DELIVERIES, giveUpPending } from '../endpoints/endpoints.repository.js';
import type { WebhookEvent } from '../events/webhook-events.js';

/** A message claimed for one attempt, with what the attempt needs of its endpoint. */
export interface ClaimedMessage {
  /** The msg_ id: the webhook-id of every attempt. */
  id: string;
  endpoint_id: string;
  type: string;
  body: string;
  /** This attempt's number; the first is 1. */
  attempts: number;
  /** Names this claim: only its holder may record the attempt. */
  claim: string;
  url: string;
  secret_sealed: string;
  /** The secret before the last rotation, while it still signs. */
  previous_secret_sealed: string | null;
}

/** One finished attempt, to be recorded. */
export interface AttemptRecord {
  message: ClaimedMessage;
  /** When it started, and how long it took. */
  at: Date;
  durationMs: number;
  delivered: boolean;
  statusCode?: number;
  error?: string;
  /** After a failure: when to try again, or undefined when no try is left. */
  retryWaitMs?: number;
}

/** What recording an attempt did. */
export type Recorded =
  /** The claim had lapsed and another attempt took the message: nothing was written. */
  { recorded: false } | { recorded: true; nextAttemptAt?: Date; failingSince?: Date };

/** The messages table: events waiting for their endpoints, claimed, retried and finished. */
@Injectable()
export class MessagesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * In an event handler's transaction: one message for each enabled endpoint of the event's
   * project subscribed to its type (or to `*`). Answers how many were made.
   */
  async insertForEvent(
    manager: EntityManager,
    eventId: string,
    event: WebhookEvent,
    body: string,
  ): Promise<number> {
    const endpoints = await queryRows<{ id: string }>(
      manager,
      `SELECT id FROM notifications.endpoints
        WHERE project_id = $1 AND enabled AND events && ARRAY[$2, '*']::text[]`,
      [event.projectId, event.type],
    );
    if (endpoints.length === 0) return 0;
    await manager.query(
      `INSERT INTO notifications.messages (id, endpoint_id, event_id, type, database_id, body)
       SELECT id, endpoint_id, $3, $4, $5, $6
         FROM unnest($1::text[], $2::text[]) AS made (id, endpoint_id)
       ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
      [
        endpoints.map(() => newId('msg')),
        endpoints.map(({ id }) => id),
        eventId,
        event.type,
        event.databaseId,
        body,
      ],
    );
    return endpoints.length;
  }

  /**
   * Claims up to `limit` due messages of enabled endpoints for one attempt each, skipping
   * those another replica holds, with a lease of `leaseSeconds` (the message is due again
   * when it lapses). The order rule: a message waits while an older one of its endpoint and
   * database is still pending, but not longer than `orderWaitMs` after it was made.
   */
  claim(
    limit: number,
    claim: string,
    leaseSeconds: number,
    orderWaitMs: number,
  ): Promise<ClaimedMessage[]> {
    return queryRows<ClaimedMessage>(
      this.dataSource,
      `WITH due AS (
         SELECT m.id FROM notifications.messages m
           JOIN notifications.endpoints e ON e.id = m.endpoint_id
          WHERE m.status = 'pending' AND m.next_attempt_at <= now() AND e.enabled
            AND (m.created_at <= now() - make_interval(secs => $4)
                 OR NOT EXISTS (
                   SELECT 1 FROM notifications.messages older
                    WHERE older.endpoint_id = m.endpoint_id
                      AND older.database_id = m.database_id
                      AND older.status = 'pending' AND older.seq < m.seq))
          ORDER BY m.next_attempt_at, m.seq
          LIMIT $1
          FOR UPDATE OF m SKIP LOCKED)
       UPDATE notifications.messages m
          SET attempts = m.attempts + 1, claim = $2,
              next_attempt_at = now() + make_interval(secs => $3)
         FROM due, notifications.endpoints e
        WHERE m.id = due.id AND e.id = m.endpoint_id
       RETURNING m.id, m.endpoint_id, m.type, m.body, m.attempts, m.claim, e.url, e.secret_sealed,
                 CASE WHEN e.previous_secret_until > now() THEN e.previous_secret_sealed END
                   AS previous_secret_sealed`,
      [limit, claim, leaseSeconds, orderWaitMs / 1000],
    );
  }

  /** Extends the leases of the messages these claims still hold. */
  async renew(held: { id: string; claim: string }[], leaseSeconds: number): Promise<void> {
    if (held.length === 0) return;
    await this.dataSource.query(
      `UPDATE notifications.messages m
          SET next_attempt_at = now() + make_interval(secs => $3)
         FROM unnest($1::text[], $2::text[]) AS held (id, claim)
        WHERE m.id = held.id AND m.claim = held.claim AND m.status = 'pending'`,
      [held.map(({ id }) => id), held.map(({ claim }) => claim), leaseSeconds],
    );
  }

  /**
   * Records an attempt if its claim still holds the message: the message delivered, due
   * again after the wait, or given up; the attempt's row; the endpoint's failure clock
   * (stopped by a success, started by the first failure after one). The endpoint keeps its
   * last KEPT_DELIVERIES attempts, and the messages still listed by them.
   */
  record(attempt: AttemptRecord): Promise<Recorded> {
    const { message } = attempt;
    const status = attempt.delivered
      ? 'delivered'
      : attempt.retryWaitMs === undefined
        ? 'failed'
        : 'pending';
    return this.dataSource.transaction(async (manager) => {
      const [updated] = await queryRows<{ next_attempt_at: Date | null }>(
        manager,
        `UPDATE notifications.messages
            SET status = $3, claim = NULL,
                next_attempt_at = now() + make_interval(secs => $4),
                finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
          WHERE id = $1 AND claim = $2 AND status = 'pending'
          RETURNING CASE WHEN status = 'pending' THEN next_attempt_at END AS next_attempt_at`,
        [message.id, message.claim, status, (attempt.retryWaitMs ?? 0) / 1000],
      );
      if (!updated) return { recorded: false };
      const nextAttemptAt = updated.next_attempt_at ?? undefined;
      await manager.query(
        `INSERT INTO notifications.deliveries
           (id, endpoint_id, message_id, type, attempt, status_code, error, duration_ms, at,
            next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          newId('dlv'),
          message.endpoint_id,
          message.id,
          message.type,
          message.attempts,
          attempt.statusCode ?? null,
          attempt.error ?? null,
          Math.round(attempt.durationMs),
          attempt.at,
          nextAttemptAt ?? null,
        ],
      );
      const [endpoint] = await queryRows<{ failing_since: Date | null }>(
        manager,
        `UPDATE notifications.endpoints
            SET failing_since = CASE WHEN $2 THEN NULL ELSE coalesce(failing_since, $3) END
          WHERE id = $1 RETURNING failing_since`,
        [message.endpoint_id, attempt.delivered, attempt.at],
      );
      await prune(manager, message.endpoint_id);
      return { recorded: true, nextAttemptAt, failingSince: endpoint?.failing_since ?? undefined };
    });
  }

  /**
   * Disables an endpoint whose deliveries all failed too long, with the reason, and gives up
   * the events waiting for it. False when it was disabled (or deleted) already.
   */
  disable(endpointId: string, reason: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const [disabled] = await queryRows<{ id: string }>(
        manager,
        `UPDATE notifications.endpoints SET enabled = false, disabled_reason = $2
          WHERE id = $1 AND enabled RETURNING id`,
        [endpointId, reason],
      );
      if (disabled) await giveUpPending(manager, endpointId);
      return disabled !== undefined;
    });
  }

  /** Messages waiting for an attempt, of every endpoint. */
  async pendingCount(): Promise<number> {
    const [row] = await queryRows<{ count: number }>(
      this.dataSource,
      `SELECT count(*)::int AS count FROM notifications.messages WHERE status = 'pending'`,
      [],
    );
    return row?.count ?? 0;
  }
}

/**
 * Keeps an endpoint's last KEPT_DELIVERIES attempts, and of its finished messages those an
 * attempt it keeps names.
 */
async function prune(manager: EntityManager, endpointId: string): Promise<void> {
  await manager.query(
    `DELETE FROM notifications.deliveries
      WHERE endpoint_id = $1 AND seq < (
        SELECT min(seq) FROM (
          SELECT seq FROM notifications.deliveries WHERE endpoint_id = $1
           ORDER BY seq DESC LIMIT ${KEPT_DELIVERIES}) AS kept)`,
    [endpointId],
  );
  await manager.query(
    `DELETE FROM notifications.messages m
      WHERE m.endpoint_id = $1 AND m.status <> 'pending'
        AND NOT EXISTS (SELECT 1 FROM notifications.deliveries d WHERE d.message_id = m.id)`,
    [endpointId],
  );
}
