import { Controller } from '@nestjs/common';
import {
  CreateWebhookRequest,
  ProjectRef,
  RequestContext,
  UpdateWebhookRequest,
  WEBHOOK_PATTERNS,
  WebhookRef,
} from '@pgcloud/contracts';
import { Handles, MessageBody, MessageCtx } from '@pgcloud/messaging';
import { EndpointsService } from './endpoints.service.js';

/** Message handlers of notification-service: a project's webhook endpoints. */
@Controller()
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Handles(WEBHOOK_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() body: CreateWebhookRequest) {
    return this.endpoints.create(ctx, body);
  }

  @Handles(WEBHOOK_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectRef) {
    return this.endpoints.list(ctx, body.project_id);
  }

  @Handles(WEBHOOK_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: WebhookRef) {
    return this.endpoints.get(ctx, refOf(body));
  }

  @Handles(WEBHOOK_PATTERNS.update)
  update(@MessageCtx() ctx: RequestContext, @MessageBody() body: UpdateWebhookRequest) {
    return this.endpoints.update(ctx, body);
  }

  @Handles(WEBHOOK_PATTERNS.delete)
  delete(@MessageCtx() ctx: RequestContext, @MessageBody() body: WebhookRef) {
    return this.endpoints.delete(ctx, refOf(body));
  }

  @Handles(WEBHOOK_PATTERNS.rotateSecret)
  rotateSecret(@MessageCtx() ctx: RequestContext, @MessageBody() body: WebhookRef) {
    return this.endpoints.rotateSecret(ctx, refOf(body));
  }

  @Handles(WEBHOOK_PATTERNS.deliveries)
  deliveries(@MessageCtx() ctx: RequestContext, @MessageBody() body: WebhookRef) {
    return this.endpoints.deliveries(ctx, refOf(body));
  }
}

/** The endpoint a message names, and nothing else it carries. */
function refOf(body: WebhookRef): WebhookRef {
  return { project_id: body.project_id, webhook_id: body.webhook_id };
}
