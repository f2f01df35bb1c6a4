import { Injectable, Logger } from '@nestjs/common';
import type { OnModuleInit } from '@nestjs/common';
import type { ProjectEvent } from '@pgcloud/contracts';
import { PROJECT_EVENTS } from '@pgcloud/contracts';
import type { EventDelivery } from '@pgcloud/messaging';
import { EventSubscriber } from '@pgcloud/messaging';
import { MessagesRepository } from '../delivery/messages.repository.js';
import { EndpointsRepository } from '../endpoints/endpoints.repository.js';
import type { WebhookSource } from './webhook-events.js';
import { WEBHOOK_SOURCES, webhookBody } from './webhook-events.js';

/**
 * The domain events webhooks are made of (docs/api/webhooks.md#events): each handled once,
 * in its inbox transaction, by writing one message per endpoint that gets it, which the
 * delivery worker then sends. A deleted project's endpoints go with everything of them.
 */
@Injectable()
export class DomainEventsListener implements OnModuleInit {
  private readonly logger = new Logger(DomainEventsListener.name);

  constructor(
    private readonly subscriber: EventSubscriber,
    private readonly messages: MessagesRepository,
    private readonly endpoints: EndpointsRepository,
  ) {}

  onModuleInit(): void {
    for (const source of WEBHOOK_SOURCES)
      this.subscriber.on(source.def, (payload, delivery) => this.fanOut(source, payload, delivery));
    this.subscriber.on(PROJECT_EVENTS.deleted, (payload, delivery) =>
      this.projectDeleted(payload, delivery),
    );
  }

  private async fanOut(
    source: WebhookSource,
    payload: object,
    { eventId, manager, at }: EventDelivery,
  ): Promise<void> {
    const event = source.toWebhook(payload);
    if (!event) return;
    const made = await this.messages.insertForEvent(
      manager,
      eventId,
      event,
      webhookBody(event, at),
    );
    if (made > 0) this.logger.debug(`${event.type} ${eventId}: ${made} message(s)`);
  }

  private async projectDeleted(
    { project_id: projectId }: ProjectEvent,
    { manager }: EventDelivery,
  ): Promise<void> {
    const removed = await this.endpoints.deleteProject(manager, projectId);
    if (removed > 0)
      this.logger.log(`project ${projectId} deleted: ${removed} endpoint(s) removed`);
  }
}
