import { durationMs } from '@pgcloud/config/duration';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { LocalDatabaseDetail } from '../local-daemon-client.js';
import {
  DEFAULT_DAEMON_URL,
  LocalDaemonClient,
  daemonUrl,
  readDaemonToken,
} from '../local-daemon-client.js';
import { renderFields, renderTable } from '../output.js';
import { formatBytes } from '../progress.js';
import { registerPullCommand } from './local-pull.js';

/**
 * `local list|create|get|delete|snapshot|snapshots|reset|pull`: databases of the local
 * daemon, their snapshots, and cloud databases pulled down (docs/api/local-daemon.md).
 */
export function registerLocalCommands(program: Command): void {
  const local = program
    .command('local')
    .description('List, create, show and delete databases of the local daemon (`npm run daemon`)');

  withLocalOptions(local.command('list').description('List the local databases')).action(
    runs(async (ctx) => {
      const answer = await daemon(ctx).list();
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.databases, [
            { header: 'name', value: (d) => d.name },
            { header: 'size', value: (d) => formatBytes(d.size) },
            { header: 'tables', value: (d) => d.tableCount },
            { header: 'created', value: (d) => d.createdAt },
          ]),
        () => answer.databases.map((d) => d.name).join('\n'),
      );
    }),
  );

  withLocalOptions(
    local
      .command('create')
      .description('Create a local database, empty or as a copy of another')
      .argument('<name>', 'the new database name (lowercase letters, digits, _ and -)')
      .option('--template <database>', 'copy this existing local database (it must be idle)')
      .option('--ttl <duration>', 'drop it this long from now: 90s, 30m, 2h, 7d (at most 30d)')
      .option('--temporary', 'drop it when the daemon stops'),
  ).action(
    runs(async (ctx, name: string) => {
      const { template, ttl, temporary } = ctx.options as CreateFlags;
      const created = await daemon(ctx).create({
        name,
        ...(template ? { template } : {}),
        ...(ttl !== undefined ? { ttlSeconds: ttlSecondsOf(ttl) } : {}),
        ...(temporary ? { temporary } : {}),
      });
      ctx.out.result(
        created,
        () => showLocalDatabase(created),
        () => created.name,
      );
    }),
  );

  withLocalOptions(
    local
      .command('get')
      .description('Show a local database: size, contents, extensions and how to connect')
      .argument('<name>', 'the local database'),
  ).action(
    runs(async (ctx, name: string) => {
      const detail = await daemon(ctx).get(name);
      ctx.out.result(
        detail,
        () => showLocalDatabase(detail),
        () => detail.name,
      );
    }),
  );

  withLocalOptions(
    local
      .command('snapshot')
      .description('Keep a copy of a local database as it is now, to reset it to later')
      .argument('<name>', 'the local database (no other session may be connected to it)')
      .argument('<snapshot>', 'a name for the snapshot, unique among its snapshots'),
  ).action(
    runs(async (ctx, name: string, snapshot: string) => {
      const taken = await daemon(ctx).snapshot(name, snapshot);
      ctx.out.result(
        taken,
        () => `Snapshot ${taken.name} of ${taken.database} taken (${formatBytes(taken.size)}).`,
        () => taken.name,
      );
    }),
  );

  withLocalOptions(
    local
      .command('snapshots')
      .description("List a local database's snapshots, oldest first")
      .argument('<name>', 'the local database'),
  ).action(
    runs(async (ctx, name: string) => {
      const answer = await daemon(ctx).snapshots(name);
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.snapshots, [
            { header: 'name', value: (s) => s.name },
            { header: 'size', value: (s) => formatBytes(s.size) },
            { header: 'created', value: (s) => s.createdAt },
          ]),
        () => answer.snapshots.map((s) => s.name).join('\n'),
      );
    }),
  );

  withLocalOptions(
    local
      .command('reset')
      .description('Bring a local database back to a snapshot (its open sessions are ended)')
      .argument('<name>', 'the local database')
      .argument('<snapshot>', 'one of its snapshots'),
  ).action(
    runs(async (ctx, name: string, snapshot: string) => {
      const detail = await daemon(ctx).reset(name, snapshot);
      ctx.out.result(
        detail,
        () => `Local database ${detail.name} is back at snapshot ${snapshot}.`,
        () => detail.name,
      );
    }),
  );

  registerPullCommand(local, daemon);

  withLocalOptions(
    local
      .command('delete')
      .description('Delete a local database and its data')
      .argument('<name>', 'the local database'),
  ).action(
    runs(async (ctx, name: string) => {
      const deleted = await daemon(ctx).delete(name);
      ctx.out.result(
        deleted,
        () => `Deleted local database ${deleted.name}.`,
        () => deleted.name,
      );
    }),
  );
}

/** Output options and the daemon's address: the cloud's --api-url and --token do not apply. */
function withLocalOptions(command: Command): Command {
  return command
    .option('--json', "print the daemon's answer as JSON on stdout (errors as JSON on stderr)")
    .option('-q, --quiet', 'print only the essential value (a name)')
    .option(
      '--daemon-url <url>',
      `the local daemon (default: PGCLOUD_DAEMON_URL, then ${DEFAULT_DAEMON_URL})`,
    );
}

function daemon(ctx: CliContext): LocalDaemonClient {
  const given = (ctx.options as { daemonUrl?: string }).daemonUrl;
  return new LocalDaemonClient({
    baseUrl: daemonUrl(given, ctx.env),
    token: readDaemonToken(ctx.env),
  });
}

/** The detail record for a person: the password stays out (it is in --json). */
export function showLocalDatabase(detail: LocalDatabaseDetail): string {
  const { connection } = detail;
  const schemas = detail.schemas.map((s) => `${s.name} (${s.tableCount})`).join(', ');
  const extensions = detail.extensions.map((e) => `${e.name} ${e.version}`).join(', ');
  return renderFields([
    ['name', detail.name],
    ['size', formatBytes(detail.size)],
    ['created', detail.createdAt],
    ['expires', detail.expiresAt ?? (detail.temporary ? 'when the daemon stops' : 'never')],
    ['tables', detail.tables],
    ['views', detail.views],
    ['functions', detail.functions],
    ['indexes', detail.indexes],
    ['schemas (tables)', schemas],
    ['extensions', extensions],
    ['host', connection.host],
    ['port', connection.port],
    ['database', connection.database],
    ['user', connection.user],
    ['password', '(hidden: see --json)'],
  ]);
}

/** The flags of `local create`. */
interface CreateFlags {
  template?: string;
  ttl?: string;
  temporary?: boolean;
}

/** `--ttl` in whole seconds (a duration such as 90s, 30m, 2h or 7d). */
export function ttlSecondsOf(ttl: string): number {
  try {
    return durationMs(ttl) / 1000;
  } catch {
    throw new CliError(
      EXIT.usage,
      'DURATION_INVALID',
      `--ttl takes a duration such as 90s, 30m, 2h or 7d, not "${ttl}"`,
    );
  }
}
