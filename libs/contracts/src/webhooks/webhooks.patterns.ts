import { rpc } from '../catalogue.js';
import { ProjectRef } from '../databases/databases.messages.js';
import type { Deleted } from '../projects/projects.types.js';
import { CreateWebhookRequest, UpdateWebhookRequest, WebhookRef } from './webhooks.messages.js';
import type {
  Webhook,
  WebhookDeliveryList,
  WebhookList,
  WebhookWithSecret,
} from './webhooks.types.js';

/** Webhook endpoint patterns answered by notification-service (docs/api/webhooks.md). */
export const WEBHOOK_PATTERNS = {
  /** A new endpoint and its secret (Free 2, Pro 20 per project). */
  create: rpc<CreateWebhookRequest, WebhookWithSecret>(
    'notifications',
    'webhooks.create',
    CreateWebhookRequest,
  ),
  list: rpc<ProjectRef, WebhookList>('notifications', 'webhooks.list', ProjectRef),
  /** WEBHOOK_NOT_FOUND for another project's. */
  get: rpc<WebhookRef, Webhook>('notifications', 'webhooks.get', WebhookRef),
  update: rpc<UpdateWebhookRequest, Webhook>(
    'notifications',
    'webhooks.update',
    UpdateWebhookRequest,
  ),
  delete: rpc<WebhookRef, Deleted>('notifications', 'webhooks.delete', WebhookRef),
  /** A new secret; the old one keeps signing beside it for 24 h. */
  rotateSecret: rpc<WebhookRef, WebhookWithSecret>(
    'notifications',
    'webhooks.rotate-secret',
    WebhookRef,
  ),
  /** The last 100 attempts, newest first. */
  deliveries: rpc<WebhookRef, WebhookDeliveryList>(
    'notifications',
    'webhooks.deliveries',
    WebhookRef,
  ),
} as const;
