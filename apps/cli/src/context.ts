import type { Client, Project } from '@pgcloud/api-client';
import { createApi, getProject, listProjects, unwrap } from '@pgcloud/api-client';
import type { Command } from 'commander';
import { Option } from 'commander';
import { CliError, EXIT, exitCodeOf } from './exit-codes.js';
import { Output } from './output.js';
import type { CliConfig, Credentials } from './settings-files.js';
import { configPath, credentialsPath, readJsonFile } from './settings-files.js';

/** The API of `npm run up` on this machine, when nothing names another. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** The options every command takes (docs/cli.md). */
export interface CommonOptions {
  json?: boolean;
  quiet?: boolean;
  apiUrl?: string;
  /** Refused: see withCommonOptions. */
  token?: string;
  project?: string;
  db?: string;
}

const PROJECT_ID = /^proj_[0-9a-z]{20}$/;

/**
 * What one command runs with: its options, the environment, the saved sign-in and current
 * project, and where it prints.
 */
export class CliContext {
  readonly out: Output;
  #credentials: Credentials | undefined | null = null;

  constructor(
    readonly options: CommonOptions,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.out = new Output(options);
  }

  /** The saved sign-in of `pgcloud login`, if any. */
  get credentials(): Credentials | undefined {
    if (this.#credentials === null)
      this.#credentials = readJsonFile<Credentials>(credentialsPath(this.env));
    return this.#credentials;
  }

  /** `--api-url`, then PGCLOUD_API_URL, then the API of the saved sign-in, then this machine's. */
  get apiUrl(): string {
    const url =
      this.options.apiUrl ??
      this.env['PGCLOUD_API_URL'] ??
      this.credentials?.api_url ??
      DEFAULT_API_URL;
    return url.replace(/\/+$/, '');
  }

  /**
   * PGCLOUD_TOKEN, then the saved sign-in's token, which is only ever sent to the API it
   * was issued by.
   */
  get token(): string | undefined {
    const given = this.env['PGCLOUD_TOKEN'];
    if (given) return given;
    const saved = this.credentials;
    return saved && saved.api_url.replace(/\/+$/, '') === this.apiUrl ? saved.token : undefined;
  }

  /** A client for the public routes (sign-in, health): no token. */
  publicApi(): Client {
    return createApi({ baseUrl: this.apiUrl });
  }

  /** A client that sends the caller's token; exit code 3 when there is none. */
  api(): Client {
    const token = this.token;
    if (!token)
      throw new CliError(
        EXIT.auth,
        'NOT_SIGNED_IN',
        `not signed in to ${this.apiUrl}: run \`pgcloud login\`, or set PGCLOUD_TOKEN (an API key from \`pgcloud tokens create\`)`,
      );
    return createApi({ baseUrl: this.apiUrl, token });
  }

  /** The project a command works in: `--project`, else the one of `pgcloud use`. */
  get projectRef(): string {
    const ref =
      this.options.project ?? readJsonFile<CliConfig>(configPath(this.env))?.project ?? undefined;
    if (!ref)
      throw new CliError(
        EXIT.usage,
        'NO_PROJECT',
        'no project chosen: pass --project PROJECT, or run `pgcloud use PROJECT` once',
      );
    return ref;
  }

  /** The project named by id or name (exit code 4 when the account has none such). */
  async resolveProject(ref: string = this.projectRef): Promise<Project> {
    const client = this.api();
    if (PROJECT_ID.test(ref)) return unwrap(getProject({ client, path: { id: ref } }));
    const { projects } = await unwrap(listProjects({ client }));
    const project = projects.find((candidate) => candidate.name === ref);
    if (!project)
      throw new CliError(EXIT.notFound, 'PROJECT_NOT_FOUND', `no project named "${ref}"`);
    return project;
  }

  /** The id of the project a command works in: an id as given, a name looked up. */
  async projectId(ref: string = this.projectRef): Promise<string> {
    return PROJECT_ID.test(ref) ? ref : (await this.resolveProject(ref)).id;
  }

  /** The database of `--db`. */
  get database(): string {
    if (!this.options.db) throw new CliError(EXIT.usage, 'NO_DATABASE', 'pass --db NAME');
    return this.options.db;
  }
}

/**
 * Adds the options every command takes: output and API; `--project` for commands inside a
 * project, and `--db` for commands on one database. `--token` is known only to be refused
 * with the reason: a token on a command line is visible to every user of the machine.
 */
export function withCommonOptions(
  command: Command,
  scope: 'account' | 'project' | 'database' = 'account',
): Command {
  command
    .option('--json', "print the API's answer as JSON on stdout (errors as JSON on stderr)")
    .option('-q, --quiet', 'print only the essential value (an id, a URL) and no progress')
    .option('--api-url <url>', 'the API to call (default: PGCLOUD_API_URL, then your sign-in)')
    .addOption(new Option('--token <token>').hideHelp());
  if (scope !== 'account')
    command.option(
      '-p, --project <project>',
      'the project, by id or name (default: `pgcloud use`)',
    );
  if (scope === 'database') command.option('--db <name>', 'the database (required)');
  return command;
}

/**
 * Runs a command's work with its context, printing any error in the chosen output and
 * setting the exit code docs/cli.md gives. Positional arguments come first,
 * as commander passes them.
 */
export function runs<Args extends string[]>(
  handler: (ctx: CliContext, ...args: Args) => Promise<void>,
): (...received: unknown[]) => Promise<void> {
  return async (...received: unknown[]) => {
    const command = received[received.length - 1] as Command;
    const args = received.slice(0, -2) as Args;
    const ctx = new CliContext(command.opts<CommonOptions>());
    try {
      if (ctx.options.token !== undefined)
        throw new CliError(
          EXIT.usage,
          'TOKEN_OPTION_REMOVED',
          '--token is not taken: a token on a command line is visible to every user of this ' +
            'machine. Set PGCLOUD_TOKEN, or run `pgcloud login`.',
        );
      await handler(ctx, ...args);
    } catch (error) {
      ctx.out.error(error);
      process.exitCode = exitCodeOf(error);
    }
  };
}
