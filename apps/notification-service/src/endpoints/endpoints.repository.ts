import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { queryRows } from '@pgcloud/postgres';
import { DataSource } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { EndpointEntity } from './endpoint.entity.js';

/** What an update changes; what is left out stays. */
export interface EndpointChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

/** An attempt as the deliveries list reads it. */
export interface DeliveryRow {
  id: string;
  message_id: string;
  type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  at: Date;
  next_attempt_at: Date | null;
}

/** How many attempts of an endpoint are kept, and listed. */
export const KEPT_DELIVERIES = 100;

/** notification-service's endpoints table, and what goes with an endpoint. */
@Injectable()
export class EndpointsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Inserts the endpoint once `allowed` (told how many the project has) has not thrown. One
   * project's creates take turns, so two at once cannot both pass its quota.
   */
  async insert(
    endpoint: Pick<
      EndpointEntity,
      'id' | 'projectId' | 'url' | 'events' | 'description' | 'secretSealed'
    >,
    allowed: (count: number) => void,
  ): Promise<EndpointEntity> {
    await this.dataSource.transaction(async (manager) => {
      // The two-key form keeps this lock apart from other services' one-key locks.
      await manager.query(
        "SELECT pg_advisory_xact_lock(hashtext('notifications.per-project'), hashtext($1))",
        [endpoint.projectId],
      );
      allowed(await manager.countBy(EndpointEntity, { projectId: endpoint.projectId }));
      await manager.insert(EndpointEntity, endpoint);
    });
    return this.dataSource.manager.findOneByOrFail(EndpointEntity, { id: endpoint.id });
  }

  /** The project's endpoints, oldest first. */
  listInProject(projectId: string): Promise<EndpointEntity[]> {
    return this.dataSource.manager.find(EndpointEntity, {
      where: { projectId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  find(projectId: string, id: string): Promise<EndpointEntity | null> {
    return this.dataSource.manager.findOneBy(EndpointEntity, { id, projectId });
  }

  /**
   * Applies the changes; null when the endpoint is gone. Turned on, it forgets why it was
   * turned off and when its failures began; turned off, the events waiting for it are given
   * up (nothing is delivered to a disabled endpoint).
   */
  async update(
    projectId: string,
    id: string,
    changes: EndpointChanges,
  ): Promise<EndpointEntity | null> {
    return this.dataSource.transaction(async (manager) => {
      const found = await manager.findOneBy(EndpointEntity, { id, projectId });
      if (!found) return null;
      const set: Partial<EndpointEntity> = { ...changes };
      if (changes.enabled === true)
        Object.assign(set, { disabledReason: null, failingSince: null });
      if (Object.keys(set).length > 0) await manager.update(EndpointEntity, { id }, set);
      if (changes.enabled === false) await giveUpPending(manager, id);
      return manager.findOneByOrFail(EndpointEntity, { id });
    });
  }

  /** Deletes the endpoint with its messages and attempts; false when it was gone already. */
  async delete(projectId: string, id: string): Promise<boolean> {
    const gone = await this.dataSource.manager.delete(EndpointEntity, { id, projectId });
    return gone.affected === 1;
  }

  /**
   * Puts a new sealed secret in place; the one it replaces keeps signing for `overlapMs`.
   * Null when the endpoint is gone.
   */
  async rotateSecret(
    projectId: string,
    id: string,
    secretSealed: string,
    overlapMs: number,
  ): Promise<EndpointEntity | null> {
    const [row] = await queryRows<{ id: string }>(
      this.dataSource,
      `UPDATE notifications.endpoints
          SET previous_secret_sealed = secret_sealed,
              previous_secret_until = now() + make_interval(secs => $4),
              secret_sealed = $3
        WHERE id = $1 AND project_id = $2
        RETURNING id`,
      [id, projectId, secretSealed, overlapMs / 1000],
    );
    return row ? this.dataSource.manager.findOneBy(EndpointEntity, { id }) : null;
  }

  /** The endpoint's last attempts, newest first. */
  deliveries(endpointId: string): Promise<DeliveryRow[]> {
    return queryRows<DeliveryRow>(
      this.dataSource,
      `SELECT id, message_id, type, attempt, status_code, error, duration_ms, at, next_attempt_at
         FROM notifications.deliveries WHERE endpoint_id = $1
        ORDER BY seq DESC LIMIT ${KEPT_DELIVERIES}`,
      [endpointId],
    );
  }

  /** Removes every endpoint of a deleted project, in the event handler's transaction. */
  async deleteProject(manager: EntityManager, projectId: string): Promise<number> {
    const gone = await manager.delete(EndpointEntity, { projectId });
    return gone.affected ?? 0;
  }
}

/** Gives up the events still waiting for an endpoint that was turned off. */
export async function giveUpPending(manager: EntityManager, endpointId: string): Promise<void> {
  await manager.query(
    `UPDATE notifications.messages SET status = 'failed', claim = NULL, finished_at = now()
      WHERE endpoint_id = $1 AND status = 'pending'`,
    [endpointId],
  );
}
