import type { Client, UpdateWebhookDto, Webhook, WebhookWithSecret } from '@pgcloud/api-client';
import {
  createWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  listWebhooks,
  rotateWebhookSecret,
  unwrap,
  updateWebhook,
} from '@pgcloud/api-client';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderFields, renderTable } from '../output.js';

const EVENTS_HELP =
  "event types, comma-separated (such as database.running,backup.failed), or '*' for all";

/** `webhooks list|create|update|delete|rotate-secret|deliveries`, each in a project. */
export function registerWebhookCommands(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description("Send the project's events, signed, to your HTTPS endpoints");

  withCommonOptions(
    webhooks.command('list').description('List the webhook endpoints of the project'),
    'project',
  ).action(
    runs(async (ctx) => {
      const { client, project_id } = await scope(ctx);
      const answer = await unwrap(listWebhooks({ client, path: { project_id } }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.webhooks, [
            { header: 'id', value: (w) => w.id },
            { header: 'url', value: (w) => w.url },
            { header: 'events', value: (w) => w.events.join(',') },
            { header: 'created', value: (w) => w.created_at },
            { header: 'state', value: (w) => stateOf(w) },
          ]),
        () => answer.webhooks.map((w) => w.id).join('\n'),
      );
    }),
  );

  withCommonOptions(
    webhooks
      .command('create')
      .description(
        'Add an endpoint; its signing secret is shown once (--quiet prints only the secret)',
      )
      .argument('<url>', 'where events are POSTed (https:)')
      .requiredOption('--events <events>', EVENTS_HELP, eventList)
      .option('--description <text>', 'what the endpoint is for (up to 200 characters)'),
    'project',
  ).action(
    runs(async (ctx, url: string) => {
      const { events, description } = ctx.options as CreateFlags;
      const { client, project_id } = await scope(ctx);
      const created = await unwrap(
        createWebhook({
          client,
          path: { project_id },
          body: { url, events, ...(description === undefined ? {} : { description }) },
        }),
      );
      showSecret(ctx, created, 'Receivers verify each delivery with it (Standard Webhooks).');
    }),
  );

  withCommonOptions(
    webhooks
      .command('update')
      .description('Change an endpoint, or turn it off or on again')
      .argument('<id>', 'the endpoint, whk_...')
      .option('--url <url>', 'a new target (https:)')
      .option('--events <events>', EVENTS_HELP, eventList)
      .option('--description <text>', 'a new description (an empty one clears it)')
      .option('--enable', 'turn it on (again after pgcloud disabled it)')
      .option('--disable', 'turn it off: no event is delivered to it while it is off, nor later'),
    'project',
  ).action(
    runs(async (ctx, webhook_id: string) => {
      const body = webhookChanges(ctx.options as WebhookFlags);
      const { client, project_id } = await scope(ctx);
      const updated = await unwrap(
        updateWebhook({ client, path: { project_id, webhook_id }, body }),
      );
      ctx.out.result(
        updated,
        () => showWebhook(updated),
        () => updated.id,
      );
    }),
  );

  withCommonOptions(
    webhooks
      .command('delete')
      .description('Delete an endpoint, its waiting events and its delivery attempts')
      .argument('<id>', 'the endpoint, whk_...'),
    'project',
  ).action(
    runs(async (ctx, webhook_id: string) => {
      const { client, project_id } = await scope(ctx);
      const deleted = await unwrap(deleteWebhook({ client, path: { project_id, webhook_id } }));
      ctx.out.result(
        deleted,
        () => `Deleted webhook endpoint ${deleted.id}.`,
        () => deleted.id,
      );
    }),
  );

  withCommonOptions(
    webhooks
      .command('rotate-secret')
      .description('Give an endpoint a new signing secret; the old one signs beside it for 24 h')
      .argument('<id>', 'the endpoint, whk_...'),
    'project',
  ).action(
    runs(async (ctx, webhook_id: string) => {
      const { client, project_id } = await scope(ctx);
      const rotated = await unwrap(
        rotateWebhookSecret({ client, path: { project_id, webhook_id } }),
      );
      showSecret(
        ctx,
        rotated,
        'For 24 hours deliveries are signed with both the old and the new secret: move your ' +
          'receivers to the new one before then.',
      );
    }),
  );

  withCommonOptions(
    webhooks
      .command('deliveries')
      .description('List the last 100 delivery attempts to an endpoint, newest first')
      .argument('<id>', 'the endpoint, whk_...'),
    'project',
  ).action(
    runs(async (ctx, webhook_id: string) => {
      const { client, project_id } = await scope(ctx);
      const answer = await unwrap(
        listWebhookDeliveries({ client, path: { project_id, webhook_id } }),
      );
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.deliveries, [
            { header: 'at', value: (d) => d.at },
            { header: 'type', value: (d) => d.type },
            { header: 'event', value: (d) => d.event_id },
            { header: 'attempt', value: (d) => d.attempt },
            { header: 'status', value: (d) => d.status_code },
            { header: 'ms', value: (d) => d.duration_ms },
            { header: 'next attempt', value: (d) => d.next_attempt_at },
            { header: 'error', value: (d) => d.error },
          ]),
        () => answer.deliveries.map((d) => d.id).join('\n'),
      );
    }),
  );
}

/** The flags of `webhooks create`: --events is required. */
interface CreateFlags {
  events: string[];
  description?: string;
}

/** The flags of `webhooks update`. */
export interface WebhookFlags {
  url?: string;
  events?: string[];
  description?: string;
  enable?: boolean;
  disable?: boolean;
}

/** `--events a,b`: the names, blanks left out; at least one. */
export function eventList(value: string): string[] {
  const events = value
    .split(',')
    .map((event) => event.trim())
    .filter((event) => event !== '');
  if (events.length === 0)
    throw new InvalidArgumentError("name at least one event type, or '*' for all of them");
  return events;
}

/** The PATCH body of `webhooks update`: what the flags change, at least one thing. */
export function webhookChanges(flags: WebhookFlags): UpdateWebhookDto {
  if (flags.enable && flags.disable)
    throw new CliError(EXIT.usage, 'ENABLE_CONFLICT', 'give --enable or --disable, not both');
  const body: UpdateWebhookDto = {};
  if (flags.url !== undefined) body.url = flags.url;
  if (flags.events !== undefined) body.events = flags.events;
  if (flags.description !== undefined) body.description = flags.description;
  if (flags.enable) body.enabled = true;
  if (flags.disable) body.enabled = false;
  if (Object.keys(body).length === 0)
    throw new CliError(
      EXIT.usage,
      'NOTHING_TO_CHANGE',
      'give at least one of --url, --events, --description, --enable and --disable',
    );
  return body;
}

async function scope(ctx: CliContext): Promise<{ client: Client; project_id: string }> {
  const client = ctx.api();
  return { client, project_id: await ctx.projectId() };
}

/**
 * An endpoint with its secret, which the API never shows again: `--quiet` prints only the
 * secret, and the person is told (on stderr, so also beside `--json`) to store it now.
 */
function showSecret(ctx: CliContext, webhook: WebhookWithSecret, use: string): void {
  ctx.out.result(
    webhook,
    () => `${showWebhook(webhook)}\n\n${webhook.secret}`,
    () => webhook.secret,
  );
  ctx.out.note(`This is the only time the secret is shown: store it now. ${use}`);
}

function stateOf(webhook: Webhook): string {
  if (webhook.enabled) return 'enabled';
  return webhook.disabled_reason ? `disabled: ${webhook.disabled_reason}` : 'disabled';
}

function showWebhook(webhook: Webhook): string {
  return renderFields([
    ['id', webhook.id],
    ['url', webhook.url],
    ['events', webhook.events.join(', ')],
    ['description', webhook.description],
    ['state', stateOf(webhook)],
    ['created', webhook.created_at],
  ]);
}
