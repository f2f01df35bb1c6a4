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
  rotateDatabaseCredentials,
  listDatabases,
  unwrap,
  updateDatabase,
} from '@pgcloud/api-client';
import { durationMs } from '@pgcloud/config/duration';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import type { CreateDatabaseFlags } from '../database-options.js';
import { createDatabaseBody, parseSize } from '../database-options.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderFields, renderTable } from '../output.js';
import { Progress, pollUntil } from '../progress.js';
import { psqlInvocation, runPsql, withCaFile } from '../psql-session.js';
import { registerBranchCommands } from './branches.js';

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
      .command('rotate-password')
      .description(
        'Give the login role a new password: new sessions with the old one are refused at once',
      )
      .argument('<name>', 'the database (it must be running)'),
    'project',
  ).action(
    runs(async (ctx, name: string) => {
      const { client, project_id } = await scope(ctx);
      const details = await unwrap(
        rotateDatabaseCredentials({ client, path: { project_id, name } }),
      );
      ctx.out.result(
        details,
        () => details.connection_string,
        () => details.connection_string,
      );
      ctx.out.note('Sessions opened with the old password go on until they end.');
    }),
  );

  withCommonOptions(
    db
      .command('resize')
      .description('Give a database a new size: its server restarts once with it')
      .argument('<name>', 'the database')
      .option('--cpu <vcpus>', 'vCPUs, 0.25-16 (Free: at most 1)', parseSize)
      .option('--memory <gib>', 'GiB of memory, 0.25-64 (Free: at most 2)', parseSize)
      .option('--storage <gib>', 'GiB of storage, 1-1024 (Free: at most 10)', parseSize)
      .option('--wait', 'wait until it runs with the new size, showing progress on stderr'),
    'project',
  ).action(runs(resize));

  registerBranchCommands(db);

  withCommonOptions(
    db
      .command('expire')
      .description('Set when the database is deleted on its own, or clear it')
      .argument('<name>', 'the database')
      .option('--in <duration>', 'from now: 90m, 24h, 7d (Free: at most 30d)')
      .option('--at <time>', 'an ISO 8601 time with its zone, such as 2026-12-24T18:00:00Z')
      .option('--never', 'clear the expiry'),
    'project',
  ).action(
    runs(async (ctx, name: string) => {
      const { client, project_id } = await scope(ctx);
      const expires_at = expiryOf(ctx.options as ExpiryFlags);
      const database = await unwrap(
        updateDatabase({ client, path: { project_id, name }, body: { expires_at } }),
      );
      ctx.out.result(
        database,
        () =>
          database.expires_at
            ? `Database ${name} expires at ${database.expires_at}.`
            : `Database ${name} does not expire.`,
        () => database.expires_at ?? '',
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
  await waitUntilRunning(ctx, client, project_id, name);
}

/** `db resize NAME [--cpu --memory --storage] [--wait]`: PATCH with the sizes given. */
async function resize(ctx: CliContext, name: string): Promise<void> {
  const flags = ctx.options as CreateDatabaseFlags & { wait?: boolean };
  const { config } = createDatabaseBody(name, flags);
  if (!config)
    throw new CliError(EXIT.usage, 'NO_SIZE', 'give --cpu, --memory or --storage (or several)');
  const { client, project_id } = await scope(ctx);
  const resized = await unwrap(
    updateDatabase({ client, path: { project_id, name }, body: { config } }),
  );
  if (!flags.wait || resized.status === 'running') {
    ctx.out.result(
      resized,
      () => showDatabase(resized),
      () => resized.id,
    );
    if (resized.status === 'resizing')
      ctx.out.note(`Follow it with \`pgcloud db get ${name}\`, or resize with --wait next time.`);
    return;
  }
  await waitUntilRunning(ctx, client, project_id, name);
}

/** Polls the database until it is running (its result) or failed (an error). */
export async function waitUntilRunning(
  ctx: CliContext,
  client: Client,
  project_id: string,
  name: string,
): Promise<void> {
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

export async function scope(ctx: CliContext): Promise<{ client: Client; project_id: string }> {
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

export function showDatabase(database: Database): string {
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
    ['proven restorable', provenRestorable(database)],
    ['expires', database.expires_at ?? 'never'],
  ]);
}

/** When the last drill passed, from which backup, and how long its restore took. */
function provenRestorable(database: Database): string {
  const proven = database.last_proven_restorable;
  if (!proven) return 'not yet (pgcloud drills run)';
  const replayed = proven.target_time ? `, replayed to ${proven.target_time}` : '';
  return (
    `${proven.at} by ${proven.drill_id} (backup ${proven.backup_id}${replayed}, ` +
    `restored in ${proven.restore_seconds.toFixed(1)} s)`
  );
}

/** The flags of `db expire`. */
interface ExpiryFlags {
  in?: string;
  at?: string;
  never?: boolean;
}

/** The expiry `db expire` asks for: exactly one of --in, --at and --never. */
export function expiryOf(options: ExpiryFlags, nowMs = Date.now()): string | null {
  const given = [options.in, options.at, options.never].filter((value) => value !== undefined);
  if (given.length !== 1)
    throw new CliError(
      EXIT.usage,
      'EXPIRY_REQUIRED',
      'give exactly one of --in DURATION, --at TIME and --never',
    );
  if (options.never) return null;
  if (options.at !== undefined) return options.at;
  try {
    return new Date(nowMs + durationMs(options.in ?? '')).toISOString();
  } catch {
    throw new CliError(
      EXIT.usage,
      'DURATION_INVALID',
      `--in takes a duration such as 90m, 24h or 7d, not "${options.in}"`,
    );
  }
}
