import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAuthCommands } from './commands/auth.js';
import { registerBackupCommands } from './commands/backups.js';
import { registerDatabaseCommands } from './commands/databases.js';
import { registerDrillCommands } from './commands/drills.js';
import { registerLocalCommands } from './commands/local.js';
import { registerPitrCommands } from './commands/pitr.js';
import { registerProjectCommands } from './commands/projects.js';
import { registerTokenCommands } from './commands/tokens.js';
import { registerWebhookCommands } from './commands/webhooks.js';

const { version } = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
) as { version: string };

/** The `pgcloud` command and all its subcommands. */
export function buildProgram(): Command {
  const program = new Command('pgcloud')
    .description(
      'Managed PostgreSQL from your terminal: sign in, then create databases, back them up and ' +
        'restore them to any second.',
    )
    .version(version, '-V, --version', 'print the version of pgcloud')
    .helpOption('-h, --help', 'show help for a command')
    .showHelpAfterError('(add --help for the flags)')
    .exitOverride()
    .addHelpText(
      'after',
      '\nExit codes: 0 success, 1 other error, 2 usage, 3 not signed in or refused, 4 not found, ' +
        '5 conflict or quota, 6 API unavailable.\n' +
        'Settings: PGCLOUD_API_URL (default http://127.0.0.1:8080), PGCLOUD_TOKEN (an API key, for ' +
        'machines), XDG_CONFIG_HOME.',
    );
  registerAuthCommands(program);
  registerTokenCommands(program);
  registerProjectCommands(program);
  registerDatabaseCommands(program);
  registerBackupCommands(program);
  registerPitrCommands(program);
  registerDrillCommands(program);
  registerWebhookCommands(program);
  registerLocalCommands(program);
  // Help is `--help` everywhere; groups do not inherit that from the program.
  const withoutHelpCommand = (command: Command): void => {
    command.helpCommand(false);
    command.commands.forEach(withoutHelpCommand);
  };
  withoutHelpCommand(program);
  return program;
}
