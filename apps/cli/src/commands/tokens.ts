import { createToken, listTokens, revokeToken, unwrap } from '@pgcloud/api-client';
import type { Command } from 'commander';
import { runs, withCommonOptions } from '../context.js';
import { integerIn } from '../database-options.js';
import { renderFields, renderTable } from '../output.js';

/** `tokens list|create|revoke`: your sign-ins and API keys. */
export function registerTokenCommands(program: Command): void {
  const tokens = program
    .command('tokens')
    .description('List your sign-ins and API keys, make API keys for machines, revoke them');

  withCommonOptions(
    tokens.command('list').description('List your live tokens, newest first'),
  ).action(
    runs(async (ctx) => {
      const answer = await unwrap(listTokens({ client: ctx.api() }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.tokens, [
            { header: 'id', value: (t) => t.id },
            { header: 'name', value: (t) => (t.current ? `${t.name} (this one)` : t.name) },
            { header: 'kind', value: (t) => t.kind },
            { header: 'created', value: (t) => t.created_at },
            { header: 'last used', value: (t) => t.last_used_at },
            { header: 'expires', value: (t) => t.expires_at },
          ]),
        () => answer.tokens.map((t) => t.id).join('\n'),
      );
    }),
  );

  withCommonOptions(
    tokens
      .command('create')
      .description('Make an API key for a machine (a CI job): shown once, set it as PGCLOUD_TOKEN')
      .argument('<name>', 'what the key is for (1-64 printable characters)')
      .option(
        '--expires-in-days <days>',
        'days until it expires, 1-365 (default 90)',
        integerIn(1, 365),
      ),
  ).action(
    runs(async (ctx, name: string) => {
      const days = (ctx.options as { expiresInDays?: number }).expiresInDays;
      const created = await unwrap(
        createToken({
          client: ctx.api(),
          body: { name, ...(days === undefined ? {} : { expires_in_days: days }) },
        }),
      );
      ctx.out.result(
        created,
        () =>
          `${renderFields([
            ['id', created.id],
            ['name', created.name],
            ['expires', created.expires_at],
          ])}\n\n${created.token}\n\nThis is the only time the key is shown: store it now (for ` +
          'example as PGCLOUD_TOKEN in your CI secrets).',
        () => created.token,
      );
    }),
  );

  withCommonOptions(
    tokens
      .command('revoke')
      .description('Revoke one of your tokens (see `pgcloud tokens list`)')
      .argument('<id>', 'the token id, tok_...'),
  ).action(
    runs(async (ctx, id: string) => {
      const answer = await unwrap(revokeToken({ client: ctx.api(), path: { id } }));
      ctx.out.result(
        answer,
        () => `Revoked ${answer.id}: it is refused within 10 seconds everywhere.`,
        () => answer.id,
      );
    }),
  );
}
