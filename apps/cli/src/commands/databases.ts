import type { Client, Database } from '@pgcloud/api-client';
import {
  ApiUnreachableError,
  apiErrorOf,
  createDatabase,
  deleteDatabase,
  getCaCertificate,
  getDatabase,
  getDatabaseUrl,
  openStorageCleanup,
  listDatabases,
  unwrap,
} from '@pgcloud/api-client';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import type { CreateDatabaseFlags } from '../database-options.js';
import { createDatabaseBody, parseSize } from '../database-options.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderFields, renderTable } from '../output.js';
import { Progress, pollUntil } from '../progress.js';
import { psqlInvocation, runPsql, withCaFile } from '../psql-session.js';

/** `db list|create|get|url|psql|delete`, each in a project. */
export function registerDatabaseCommands(program: Command): void {
  const db = program
    .command('db')
    .description('List, create, show, connect to and delete databases of a project');

  withCommonOptions(
    db.command('list').description('List the databases of the project'),
    'project',
  ).action(
    runs(async (ctx) => {
      const { client, project_id } = await scope(ctx);
      const answer = await unwrap(listDatabases({ client, path: { project_id } }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.databases, [
            { header: 'name', value: (d) => d.name },
            { header: 'status', value: (d) => d.status },
            { header: 'region', value: (d) => d.region },
            { header: 'cpu/memory/storage', value: (d) => sizes(d) },
            { header: 'created', value: (d) => d.created_at },
          ]),
        () => answer.databases.map((d) => d.name).join('\n'),
      );
    }),
  );

  withCommonOptions(
    db
      .command('create')
      .description('Create a database (sizes the API does not get are its defaults)')
      .argument('<name>', 'the new database name (lowercase letters, digits, _ and -)')
      .option('--cpu <vcpus>', 'vCPUs, 0.25-16 (default 1)', parseSize)
      .option('--memory <gib>', 'GiB of memory, 0.25-64 (default 1)', parseSize)
      .option('--storage <gib>', 'GiB of storage, 1-1024 (default 10)', parseSize)
      .option('--region <region>', "a region of `pgcloud regions` (default: the project's)")
      .option('--wait', 'wait until it is running (or failed), showing progress on stderr'),
    'project',
  ).action(runs(create));

  withCommonOptions(
    db.command('get').description('Show a database').argument('<name>', 'the database'),
    'project',
  ).action(
    runs(async (ctx, name: string) => {
      const { client, project_id } = await scope(ctx);
      const database = await unwrap(getDatabase({ client, path: { project_id, name } }));
      ctx.out.result(
        database,
        () => showDatabase(database),
        () => database.id,
      );
    }),
  );

  withCommonOptions(
    db
      .command('url')
      .description('Print the connection string (it holds the password)')
      .argument('<name>', 'the database (it must be running)'),
    'project',
  ).action(
    runs(async (ctx, name: string) => {
      const { client, project_id } = await scope(ctx);
      const details = await unwrap(getDatabaseUrl({ client, path: { project_id, name } }));
      ctx.out.result(
        details,
        () => details.connection_string,
        () => details.connection_string,
      );
    }),
  );

  withCommonOptions(
    db
      .command('cleanup')
      .description('Lift the storage fence for 15 minutes, to delete rows (BEGIN READ WRITE)')
      .argument('<name>', 'the fenced database'),
    'project',
  ).action(
    runs(async (ctx, name: string) => {
      const { client, project_id } = await scope(ctx);
      const database = await unwrap(openStorageCleanup({ client, path: { project_id, name } }));
      const until = database.storage.cleanup_until;
      ctx.out.result(
        database,
        () =>
          until
            ? `The fence is lifted until ${until}: delete rows inside BEGIN READ WRITE, then ` +
              'VACUUM. Past the limit by the grace at that time, it is fenced again.'
            : `Database ${name} is not fenced (storage ${database.storage.state}).`,
        () => until ?? '',
      );
    }),
  );

  withCommonOptions(
    db
      .command('psql')
      .description("Open psql on a database, verifying the server against the deployment's CA")
      .argument('<name>', 'the database (it must be running)')
      .argument('[psql-args...]', "arguments for psql, after `--` (e.g. -- -c 'select 1')")
      .addHelpText('after', "\nExample: pgcloud db psql orders -- -c 'select 1'"),
    'project',
  ).action((name: string, psqlArgs: string[], options: unknown, command: Command) =>
    runs((ctx, database: string) => psql(ctx, database, psqlArgs))(name, options, command),
  );

  withCommonOptions(
    db
      .command('delete')
      .description('Delete a database, its backups and WAL')
      .argument('<name>', 'the database'),
    'project',
  ).action(
    runs(async (ctx, name: string) => {
      const { client, project_id } = await scope(ctx);
      const deleted = await unwrap(deleteDatabase({ client, path: { project_id, name } }));
      ctx.out.result(
        deleted,
        () => `Deleted database ${name} (${deleted.id}).`,
        () => deleted.id,
      );
    }),
  );
}

async function create(ctx: CliContext, name: string): Promise<void> {
  const flags = ctx.options as CreateDatabaseFlags & { wait?: boolean };
  const { client, project_id } = await scope(ctx);
  const created = await unwrap(
    createDatabase({ client, path: { project_id }, body: createDatabaseBody(name, flags) }),
  );
  if (!flags.wait) {
    ctx.out.result(
      created,
      () => showDatabase(created),
      () => created.id,
    );
    ctx.out.note(`Follow it with \`pgcloud db get ${name}\`, or create with --wait next time.`);
    return;
  }
  const final = await pollUntil({
    read: () => unwrap(getDatabase({ client, path: { project_id, name } })),
    done: (database) => database.status === 'running' || database.status === 'failed',
    state: (database) => ({ phase: database.status }),
    progress: new Progress(ctx.out, `database ${name}`),
  });
  if (final.status === 'failed') {
    if (ctx.out.mode.json) ctx.out.result(final, () => '');
    throw new CliError(
      EXIT.error,
      'DATABASE_FAILED',
      `database ${name} failed: ${final.error ?? 'the API gave no reason'}`,
    );
  }
  ctx.out.result(
    final,
    () => showDatabase(final),
    () => final.id,
  );
}

async function psql(ctx: CliContext, name: string, psqlArgs: readonly string[]): Promise<void> {
  const { client, project_id } = await scope(ctx);
  const details = await unwrap(getDatabaseUrl({ client, path: { project_id, name } }));
  const pem = await caCertificate(client);
  process.exitCode = await withCaFile(pem, (caFile) =>
    runPsql(
      psqlInvocation({
        connectionString: details.connection_string,
        caFile,
        extraArgs: psqlArgs,
        env: ctx.env,
      }),
    ),
  );
}

/** GET /ca.pem answers the PEM itself, not an envelope. */
async function caCertificate(client: Client): Promise<string> {
  const result = await getCaCertificate({ client, parseAs: 'text' });
  if (!result.response)
    throw new ApiUnreachableError(result.request?.url ?? 'the API', { cause: result.error });
  if (!result.response.ok || typeof result.data !== 'string')
    throw apiErrorOf(result.response, result.error);
  return result.data;
}

async function scope(ctx: CliContext): Promise<{ client: Client; project_id: string }> {
  const client = ctx.api();
  return { client, project_id: await ctx.projectId() };
}

function sizes(database: Database): string {
  const { cpu, memory, storage } = database.config;
  return `${cpu} vCPU / ${memory} GiB / ${storage} GiB`;
}

/** `1.2 GiB of 1 GiB (fenced)`: what the server takes, against its limit. */
function storageUse(storage: Database['storage']): string {
  const gib = (bytes: number) => `${Number((bytes / 1024 ** 3).toFixed(2))} GiB`;
  const state = storage.state === 'ok' ? '' : ` (${storage.state.replace('_', '-')})`;
  return `${gib(storage.used_bytes)} of ${gib(storage.limit_bytes)}${state}`;
}

function showDatabase(database: Database): string {
  return renderFields([
    ['id', database.id],
    ['name', database.name],
    ['status', database.status],
    ...(database.error ? [['error', database.error] as [string, unknown]] : []),
    ['region', database.region],
    ['cpu', `${database.config.cpu} vCPU`],
    ['memory', `${database.config.memory} GiB`],
    ['storage', `${database.config.storage} GiB`],
    ['used', storageUse(database.storage)],
    ['server', database.platform_service_id],
    ['created', database.created_at],
  ]);
}
