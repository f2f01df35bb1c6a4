import { IsRef } from '../message-rules.js';
import { ProjectRef } from '../databases/databases.messages.js';
import { CreateWebhookDto, UpdateWebhookDto } from './webhooks.dto.js';

/** A webhook endpoint, named as the API names it: by project and id. */
export class WebhookRef extends ProjectRef {
  @IsRef()
  webhook_id: string;
}

/** webhooks.create: the HTTP body's rules, and the project it belongs to. */
export class CreateWebhookRequest extends CreateWebhookDto {
  @IsRef()
  project_id: string;
}

/** webhooks.update: the HTTP body's rules, and the endpoint it changes. */
export class UpdateWebhookRequest extends UpdateWebhookDto {
  @IsRef()
  project_id: string;

  @IsRef()
  webhook_id: string;
}
