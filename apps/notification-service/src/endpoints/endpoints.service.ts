import { Injectable, Logger } from '@nestjs/common';
import { SecretBox } from '@pgcloud/config';
import type {
  CreateWebhookRequest,
  Deleted,
  RequestContext,
  UpdateWebhookRequest,
  Webhook,
  WebhookDeliveryList,
  WebhookList,
  WebhookRef,
  WebhookWithSecret,
} from '@pgcloud/contracts';
import { DomainError, PROJECT_PATTERNS, isId, newId } from '@pgcloud/contracts';
import { RpcClient, assertTierQuota, assertTimeLeft } from '@pgcloud/messaging';
import { NotificationServiceConfig } from '../config.js';
import { newWebhookSecret, secretSealedFor } from '../signing/webhook-secret.js';
import { assertTargetUrl } from '../targets/target-url.js';
import type { EndpointEntity } from './endpoint.entity.js';
import type { DeliveryRow, EndpointChanges } from './endpoints.repository.js';
import { EndpointsRepository } from './endpoints.repository.js';

/**
 * A project's webhook endpoints (docs/api/webhooks.md): every request first asks
 * project-service whether the project is the caller's (its PROJECT_NOT_FOUND passes
 * through), and an endpoint of another project is WEBHOOK_NOT_FOUND.
 */
@Injectable()
export class EndpointsService {
  private readonly logger = new Logger(EndpointsService.name);

  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly rpc: RpcClient,
    private readonly box: SecretBox,
    private readonly config: NotificationServiceConfig,
  ) {}

  async create(ctx: RequestContext, request: CreateWebhookRequest): Promise<WebhookWithSecret> {
    // Validation before existence (docs/api/errors.md#the-order-of-checks).
    assertTargetUrl(request.url, this.config.WEBHOOK_ALLOW_PRIVATE_TARGETS);
    const projectId = await this.checkProject(ctx, request.project_id);
    const id = newId('whk');
    const secret = newWebhookSecret();
    const saved = await this.endpoints.insert(
      {
        id,
        projectId,
        url: request.url,
        events: request.events,
        description: request.description || null,
        secretSealed: this.box.seal(secret, secretSealedFor(id)),
      },
      (count) => {
        assertTierQuota(
          ctx.tier,
          count,
          this.config.webhookLimits,
          'webhook endpoints per project',
          'delete one to make room',
        );
        // Not after the caller has answered 503: its client never saw the secret.
        assertTimeLeft(ctx);
      },
    );
    this.logger.log(`webhook endpoint ${id} created in project ${projectId}`);
    return { ...toWebhook(saved), secret };
  }

  async list(ctx: RequestContext, projectId: string): Promise<WebhookList> {
    const rows = await this.endpoints.listInProject(await this.checkProject(ctx, projectId));
    return { webhooks: rows.map(toWebhook) };
  }

  async get(ctx: RequestContext, ref: WebhookRef): Promise<Webhook> {
    return toWebhook(await this.findOwned(ctx, ref));
  }

  async update(ctx: RequestContext, request: UpdateWebhookRequest): Promise<Webhook> {
    if (request.url !== undefined)
      assertTargetUrl(request.url, this.config.WEBHOOK_ALLOW_PRIVATE_TARGETS);
    const projectId = await this.checkProject(ctx, request.project_id);
    const changes: EndpointChanges = {
      url: request.url,
      events: request.events,
      description: request.description === undefined ? undefined : request.description || null,
      enabled: request.enabled,
    };
    const defined = Object.fromEntries(
      Object.entries(changes).filter(([, value]) => value !== undefined),
    ) as EndpointChanges;
    const updated = isId('whk', request.webhook_id)
      ? await this.endpoints.update(projectId, request.webhook_id, defined)
      : null;
    if (!updated) throw notFound(request.webhook_id);
    return toWebhook(updated);
  }

  async delete(ctx: RequestContext, ref: WebhookRef): Promise<Deleted> {
    const endpoint = await this.findOwned(ctx, ref);
    await this.endpoints.delete(endpoint.projectId, endpoint.id);
    this.logger.log(`webhook endpoint ${endpoint.id} deleted`);
    return { id: endpoint.id, deleted: true };
  }

  /** A new secret; the one it replaces keeps signing for WEBHOOK_SECRET_OVERLAP. */
  async rotateSecret(ctx: RequestContext, ref: WebhookRef): Promise<WebhookWithSecret> {
    const endpoint = await this.findOwned(ctx, ref);
    const secret = newWebhookSecret();
    const rotated = await this.endpoints.rotateSecret(
      endpoint.projectId,
      endpoint.id,
      this.box.seal(secret, secretSealedFor(endpoint.id)),
      this.config.secretOverlapMs,
    );
    if (!rotated) throw notFound(ref.webhook_id);
    this.logger.log(`webhook endpoint ${endpoint.id}: secret rotated`);
    return { ...toWebhook(rotated), secret };
  }

  /** The endpoint's last 100 attempts, newest first. */
  async deliveries(ctx: RequestContext, ref: WebhookRef): Promise<WebhookDeliveryList> {
    const endpoint = await this.findOwned(ctx, ref);
    const rows = await this.endpoints.deliveries(endpoint.id);
    return { deliveries: rows.map(toDelivery) };
  }

  /** The project's id once project-service says it is the caller's. */
  private async checkProject(ctx: RequestContext, projectId: string): Promise<string> {
    const project = await this.rpc.call(PROJECT_PATTERNS.check, ctx, { id: projectId });
    return project.id;
  }

  private async findOwned(ctx: RequestContext, ref: WebhookRef): Promise<EndpointEntity> {
    const projectId = await this.checkProject(ctx, ref.project_id);
    // A malformed id names nothing, and never reaches SQL.
    const found = isId('whk', ref.webhook_id)
      ? await this.endpoints.find(projectId, ref.webhook_id)
      : null;
    if (!found) throw notFound(ref.webhook_id);
    return found;
  }
}

function notFound(id: string): DomainError {
  return new DomainError('WEBHOOK_NOT_FOUND', `Webhook ${id} was not found.`);
}

/** An endpoint as the API shows it, without its secret. */
export function toWebhook(entity: EndpointEntity): Webhook {
  return {
    id: entity.id,
    url: entity.url,
    events: entity.events,
    ...(entity.description ? { description: entity.description } : {}),
    enabled: entity.enabled,
    ...(entity.disabledReason ? { disabled_reason: entity.disabledReason } : {}),
    created_at: entity.createdAt.toISOString(),
  };
}

function toDelivery(row: DeliveryRow): WebhookDeliveryList['deliveries'][number] {
  return {
    id: row.id,
    event_id: row.message_id,
    type: row.type,
    attempt: row.attempt,
    ...(row.status_code === null ? {} : { status_code: row.status_code }),
    ...(row.error === null ? {} : { error: row.error }),
    duration_ms: row.duration_ms,
    at: row.at.toISOString(),
    ...(row.next_attempt_at ? { next_attempt_at: row.next_attempt_at.toISOString() } : {}),
  };
}
