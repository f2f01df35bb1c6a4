import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { ErrorCode, RequestContext } from '@pgcloud/contracts';
import {
  CreateWebhookDto,
  Deleted,
  UpdateWebhookDto,
  WEBHOOK_PATTERNS,
  Webhook,
  WebhookDeliveryList,
  WebhookList,
  WebhookWithSecret,
} from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { Ctx } from '../http/request-context.js';
import { IDEMPOTENT_ROUTE_ERRORS, Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiEnvelope, ApiErrors } from '../openapi/api-envelope.decorator.js';

/** What every route under /projects/{project_id}/webhooks may answer besides its own. */
const PROJECT_ROUTE_ERRORS = [
  'AUTH_REQUIRED',
  'PROJECT_NOT_FOUND',
  'RATE_LIMIT_EXCEEDED',
  'SERVICE_UNAVAILABLE',
] as const satisfies readonly ErrorCode[];

/** What every route on one endpoint may answer besides its own. */
const WEBHOOK_ROUTE_ERRORS = [
  ...PROJECT_ROUTE_ERRORS,
  'WEBHOOK_NOT_FOUND',
] as const satisfies readonly ErrorCode[];

const ApiWebhookId = (): MethodDecorator =>
  ApiParam({ name: 'webhook_id', type: String, example: 'whk_k3v9x0q2m8t4b7w1c5zd' });

/** Webhook endpoints of a project: its events, delivered signed (docs/api/webhooks.md). */
@ApiTags('webhooks')
@ApiBearerAuth()
@ApiParam({ name: 'project_id', type: String, example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
@Controller('projects/:project_id/webhooks')
export class WebhooksController {
  constructor(private readonly rpc: RpcClient) {}

  @Post()
  @Idempotent(201)
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Add a webhook endpoint',
    description:
      'The project’s events of the types given (`["*"]`: all of them) are POSTed to `url`, signed as Standard Webhooks with the `secret` of this answer, which is never shown again. `url` must be `https:`; an attempt to a host that resolves to a private, loopback, link-local, multicast or unspecified address is refused (a deployment for development may allow those, and `http:`). Free 2, Pro 20 endpoints per project.',
  })
  @ApiEnvelope(WebhookWithSecret, {
    status: 201,
    description: 'The new endpoint, enabled, with its signing secret (shown only here).',
  })
  @ApiErrors(
    'VALIDATION_ERROR',
    ...PROJECT_ROUTE_ERRORS,
    'QUOTA_EXCEEDED',
    'PAYLOAD_TOO_LARGE',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  create(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Body() body: CreateWebhookDto,
  ): Promise<WebhookWithSecret> {
    return this.rpc.call(WEBHOOK_PATTERNS.create, ctx, { ...body, project_id: projectId });
  }

  @Get()
  @ApiOperation({ operationId: 'listWebhooks', summary: 'List the webhook endpoints of a project' })
  @ApiEnvelope(WebhookList, { status: 200, description: 'Every endpoint, without secrets.' })
  @ApiErrors(...PROJECT_ROUTE_ERRORS)
  list(@Ctx() ctx: RequestContext, @Param('project_id') projectId: string): Promise<WebhookList> {
    return this.rpc.call(WEBHOOK_PATTERNS.list, ctx, { project_id: projectId });
  }

  @Get(':webhook_id')
  @ApiWebhookId()
  @ApiOperation({ operationId: 'getWebhook', summary: 'Show a webhook endpoint' })
  @ApiEnvelope(Webhook, { status: 200, description: 'The endpoint, without its secret.' })
  @ApiErrors(...WEBHOOK_ROUTE_ERRORS)
  get(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('webhook_id') webhookId: string,
  ): Promise<Webhook> {
    return this.rpc.call(WEBHOOK_PATTERNS.get, ctx, {
      project_id: projectId,
      webhook_id: webhookId,
    });
  }

  @Patch(':webhook_id')
  @ApiWebhookId()
  @ApiOperation({
    operationId: 'updateWebhook',
    summary: 'Change a webhook endpoint, or turn it off or on',
    description:
      'What is given changes: `url`, `events`, `description` (empty: cleared), `enabled`. `enabled: false` turns the endpoint off and gives up the events waiting for it; `enabled: true` turns it on again, also after pgcloud disabled it, and clears `disabled_reason`.',
  })
  @ApiEnvelope(Webhook, { status: 200, description: 'The endpoint as changed.' })
  @ApiErrors('VALIDATION_ERROR', ...WEBHOOK_ROUTE_ERRORS, 'PAYLOAD_TOO_LARGE')
  update(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('webhook_id') webhookId: string,
    @Body() body: UpdateWebhookDto,
  ): Promise<Webhook> {
    return this.rpc.call(WEBHOOK_PATTERNS.update, ctx, {
      ...body,
      project_id: projectId,
      webhook_id: webhookId,
    });
  }

  @Delete(':webhook_id')
  @ApiWebhookId()
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook endpoint',
    description: 'Its waiting events and its delivery attempts go with it.',
  })
  @ApiEnvelope(Deleted, { status: 200, description: 'The endpoint is gone.' })
  @ApiErrors(...WEBHOOK_ROUTE_ERRORS)
  delete(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('webhook_id') webhookId: string,
  ): Promise<Deleted> {
    return this.rpc.call(WEBHOOK_PATTERNS.delete, ctx, {
      project_id: projectId,
      webhook_id: webhookId,
    });
  }

  @Post(':webhook_id/rotate-secret')
  @HttpCode(200)
  @ApiWebhookId()
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'A new signing secret for a webhook endpoint',
    description:
      'Answers the endpoint with its new secret, shown only here. For 24 hours deliveries carry two signatures, one by the old secret and one by the new, so a receiver can switch meanwhile.',
  })
  @ApiEnvelope(WebhookWithSecret, {
    status: 200,
    description: 'The endpoint with its new secret (shown only here).',
  })
  @ApiErrors(...WEBHOOK_ROUTE_ERRORS)
  rotateSecret(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('webhook_id') webhookId: string,
  ): Promise<WebhookWithSecret> {
    return this.rpc.call(WEBHOOK_PATTERNS.rotateSecret, ctx, {
      project_id: projectId,
      webhook_id: webhookId,
    });
  }

  @Get(':webhook_id/deliveries')
  @ApiWebhookId()
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: 'The last 100 delivery attempts to a webhook endpoint, newest first',
  })
  @ApiEnvelope(WebhookDeliveryList, {
    status: 200,
    description: 'Each attempt: its event, status or error, duration, and the next try.',
  })
  @ApiErrors(...WEBHOOK_ROUTE_ERRORS)
  deliveries(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('webhook_id') webhookId: string,
  ): Promise<WebhookDeliveryList> {
    return this.rpc.call(WEBHOOK_PATTERNS.deliveries, ctx, {
      project_id: projectId,
      webhook_id: webhookId,
    });
  }
}
