// docs/cli.md, made from the `pgcloud` command's own help (apps/cli/src/program.ts, built).
//   node tools/cli-doc.mjs write   writes docs/cli.md (npm run docs:cli)
//   node tools/cli-doc.mjs check   fails naming the parts that differ
// The page is a hand-written head (installing, output, sign-in, environment, exit codes, an
// example session), then every command and subcommand as commander knows it: usage,
// description, arguments, options with their defaults, and the text it adds to its help.
// Hidden options and commands stay out. Nothing depends on the terminal: commander's Help
// gives the terms and descriptions, and this script lays them out.
// apps/e2e/src/docs/cli.spec.ts checks that the page is what the command makes.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { differencesByPart, formatPage, pageCommand } from './generated-page.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The page, from the repository's root. */
export const PAGE = 'docs/cli.md';
const BUILT = 'apps/cli/dist';
// An option that at least this share of the commands take is described once, under
// "Shared options", and each command names it there.
const SHARED_SHARE = 0.25;
const TITLE = 'The `pgcloud` command line';

/** A module of the built command line; the build must have run. */
async function built(file) {
  const path = join(root, BUILT, file);
  if (!existsSync(path))
    throw new Error(`${BUILT}/${file} is missing: build the command line first (npx tsc -b)`);
  return import(pathToFileURL(path).href);
}

const { buildProgram } = await built('program.js');
const { EXIT } = await built('exit-codes.js');
const { DEFAULT_API_URL } = await built('context.js');
const { DEFAULT_DAEMON_URL } = await built('local-daemon-client.js');

// What each exit code of apps/cli/src/exit-codes.ts means, by its name there.
const EXIT_MEANINGS = {
  ok: 'Success (and `--help`).',
  error:
    'Any other error: an answer the command did not expect, a settings file that is not ' +
    'valid JSON, a server error.',
  usage:
    'Usage: an unknown command or flag, a missing argument, no project chosen, `--token`; ' +
    'or the API refused a value (`VALIDATION_ERROR`).',
  auth:
    'Not signed in or refused: no token for this API, no local daemon token, an expired ' +
    'sign-in code, `401`, or `403 ACCESS_DENIED`.',
  notFound: 'Not found: `404`, or no project of that name in your account.',
  conflict:
    'Conflict or quota: `409` or `422` (a name in use, a state that does not allow it), ' +
    '`QUOTA_EXCEEDED`, or a download whose file exists.',
  unavailable:
    'The API is unavailable: it (or the local daemon) does not answer, or answers `429`, ' +
    '`502`, `503` or `504`. Trying again later may work.',
};

function exitCodes() {
  const names = Object.keys(EXIT);
  const missing = names.filter((name) => !(name in EXIT_MEANINGS));
  const stale = Object.keys(EXIT_MEANINGS).filter((name) => !(name in EXIT));
  if (missing.length > 0 || stale.length > 0)
    throw new Error(
      `tools/cli-doc.mjs: EXIT_MEANINGS must match EXIT of apps/cli/src/exit-codes.ts ` +
        `(without a meaning: ${missing.join(', ') || 'none'}; ` +
        `not in EXIT: ${stale.join(', ') || 'none'})`,
    );
  return names
    .sort((a, b) => EXIT[a] - EXIT[b])
    .map((name) => `| ${EXIT[name]} | ${EXIT_MEANINGS[name]} |`);
}

const HEAD = () => `\`pgcloud\` is the command line of the service: sign in, then drive every
resource (projects, databases, backups, restores, point-in-time recovery) and the local
daemon's databases. Its quick start is in the
[README](../README.md#quick-start-with-the-command-line); this page says how it behaves
and lists every command and flag, as \`pgcloud --help\` and \`pgcloud COMMAND --help\` print
them.

- [Installing and running](#installing-and-running)
- [An example session](#an-example-session)
- [Output](#output)
- [Signing in and tokens](#signing-in-and-tokens)
- [Environment variables](#environment-variables)
- [Exit codes](#exit-codes)
- [Shared options](#shared-options)
- [Commands](#commands)

## Installing and running

The command runs from this checkout, so build before you use it: \`npm run build\` (or
\`npm run up\`, which builds too). Then, in the checkout, \`npx pgcloud\` runs it;
\`npm install -g ./apps/cli\` (or \`npm link\` in \`apps/cli\`) puts \`pgcloud\` on your PATH;
without either, \`node apps/cli/dist/main.js\` is the same command. Before the build,
\`pgcloud\` only says to run \`npm run build\`. It needs Node.js 20.19 or newer, and \`psql\` on the PATH for
\`pgcloud db psql\`.

## An example session

With \`pgcloud\` on your PATH (in the checkout, \`npx pgcloud\` in its place):

\`\`\`sh
pgcloud login                         # prints a code and the page to approve it on
pgcloud projects create shop-backend
pgcloud use shop-backend              # later commands need no --project
pgcloud db create shop --wait         # returns once the server accepts TLS logins
pgcloud db psql shop                  # psql, the server verified against /ca.pem
pgcloud backups create --db shop --wait
pgcloud backups download bkp_… --db shop -o shop.tar.zst   # SHA-256 checked
pgcloud restore bkp_… --db shop --into shop-copy --wait
pgcloud restore bkp_… --db shop --dry-run             # the plan and an estimate; nothing is made
pgcloud cancel-restore rstr_… --db shop                # before it swaps: the source as it was
pgcloud pitr enable --db shop --retention-days 7
pgcloud pitr restore --db shop --to 2026-11-24T10:15:00Z --into shop-before --wait
pgcloud pitr restore-point --db shop before-migration
pgcloud pitr restore --db shop --restore-point before-migration --into shop-premigration
pgcloud local create shop-dev --template shop-template    # the local daemon
pgcloud tokens create ci-deploy -q    # an API key for CI, shown once: its PGCLOUD_TOKEN
pgcloud tokens list                   # sign-ins and API keys; \`tokens revoke tok_…\`
pgcloud logout --all                  # every token of the account stops working
\`\`\`

\`\`\`
$ pgcloud projects list
ID                         NAME          REGION  CREATED
proj_k3v9x0q2m8t4b7w1c5zd  shop-backend  local   2026-11-24T10:02:11.348Z
\`\`\`

A command's answer goes to stdout and nothing else does, so it can be captured:
\`BACKUP=$(pgcloud backups create --db shop --wait --quiet)\` holds the backup's id.

## Output

- **Readable**, by default: a table or a field list on stdout, \`-\` for an empty value and
  \`(none)\` for an empty list. Notes for you (what happened, what to do next) go to stderr.
- **\`--json\`** prints what the API's \`data\` held, as JSON on stdout (after \`--wait\`, the
  final state), and errors as \`{"code", "message", "request_id"}\` on stderr. The codes are
  the API's ([errors](api/errors.md#codes)) or the command line's own (\`NOT_SIGNED_IN\`,
  \`NO_PROJECT\`, \`FILE_EXISTS\`, \`UNREACHABLE\`, ...).
- **\`--quiet\`** (\`-q\`) prints only the essential value (an id, a URL, a name) and no
  notes or progress.
- **Errors**, without \`--json\`: \`error: MESSAGE (code CODE, request id ID)\` on stderr, then
  one line per field the API named. The request id finds the request in the services' logs.
- **Progress**: \`--wait\` and downloads show it on stderr. On a terminal it is one live line
  with the phase, the bytes done and an ETA; piped, a plain line at each new phase and at
  every tenth of the bytes.
- **Downloads** ([\`pgcloud backups download\`](#pgcloud-backups-download)) stream into a temporary file beside the target
  and rename it only once its SHA-256 matches the backup's; on a mismatch or any failure
  the file is removed and the target left as it was. An existing target is refused (exit
  code 5) unless \`--force\`.
- \`pgcloud login\` prints its code and page on stderr whatever the mode, since they are for
  the person.

## Signing in and tokens

[\`pgcloud login\`](#pgcloud-login) signs in with the device flow: it prints a code and a page, opens the page
in your browser when it can (not with \`--no-browser\`), and waits until you approve. It opens
only an \`https:\` page, or \`http:\` on this machine. It saves the token in
\`$XDG_CONFIG_HOME/pgcloud/credentials.json\` (default \`~/.config/pgcloud/\`, mode 0600) for
the API it signed in to, and sends it to no other API. \`pgcloud logout\` revokes it and
removes the file (\`--all\`: every token of the account); with \`PGCLOUD_TOKEN\` set, it
revokes that token and leaves the file.

\`PGCLOUD_TOKEN\` takes precedence over the saved sign-in: a machine's API key, from
[\`pgcloud tokens create\`](#pgcloud-tokens-create). There is no \`--token\` (it is refused, exit code 2), since a
command line is visible to every user of the machine. \`--api-url\`, else \`PGCLOUD_API_URL\`,
names the API; without either, the API of the saved sign-in, else \`${DEFAULT_API_URL}\`.
Tokens and API keys, how long they live and how to revoke them:
[api/auth.md](api/auth.md).

[\`pgcloud use PROJECT\`](#pgcloud-use) keeps the current project in \`config.json\` beside the credentials;
commands inside a project take \`--project\` (\`-p\`) to name another.

[\`pgcloud local\`](#pgcloud-local) needs no sign-in: it reads the local daemon's token file
(\`DAEMON_TOKEN_FILE\`, default \`~/.config/pgcloud/daemon.token\`, which the daemon writes on
its first start) and reaches the daemon at \`--daemon-url\`, else \`PGCLOUD_DAEMON_URL\`, else
\`${DEFAULT_DAEMON_URL}\` ([the local daemon](api/local-daemon.md)).

## Environment variables

| variable | what it sets | default |
| --- | --- | --- |
| \`PGCLOUD_TOKEN\` | The token to send, before the saved sign-in's: an API key from \`pgcloud tokens create\`, for machines. | none |
| \`PGCLOUD_API_URL\` | The API to call, unless \`--api-url\` names one. | the saved sign-in's API, else \`${DEFAULT_API_URL}\` |
| \`PGCLOUD_DAEMON_URL\` | The local daemon \`pgcloud local\` calls, unless \`--daemon-url\` names one. | \`${DEFAULT_DAEMON_URL}\` |
| \`DAEMON_TOKEN_FILE\` | The file holding the local daemon's token. | \`$XDG_CONFIG_HOME/pgcloud/daemon.token\` |
| \`XDG_CONFIG_HOME\` | The folder whose \`pgcloud/\` holds \`credentials.json\`, \`config.json\` and the daemon's token. | \`~/.config\` |

## Exit codes

| code | meaning |
| --- | --- |
${exitCodes().join('\n')}
`;

const OUTRO = `## Changing the command line

The commands are in \`apps/cli/src/commands/\`, and the program that gathers them in
\`apps/cli/src/program.ts\`. They call the API through \`@pgcloud/api-client\`
(\`libs/api-client\`), a typed client generated from the gateway's OpenAPI document: after
changing a route, \`npm run openapi\` regenerates it (the build fails until it is). After
changing a command, build, then \`npm run docs:cli\` writes this page again; a spec fails
while it is stale.`;

/** Text from commander for Markdown: backticks kept as code, the rest escaped. */
function inline(text) {
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : // Only a `_` with a letter or digit after it and none before can open emphasis;
          // `>` mid-line is no quote.
          part
            .replace(/[\\*[\]<|]/g, '\\$&')
            .replace(/(?<![\p{L}\p{N}])_(?=[\p{L}\p{N}])/gu, '\\_'),
    )
    .join('');
}

/** Text from commander for a table's cell: a `|` splits cells even inside code. */
const cell = (text) =>
  inline(text)
    .split(/(`[^`]*`)/)
    .map((part, index) => (index % 2 === 1 ? part.replace(/\|/g, '\\|') : part))
    .join('');

/** A term (flags, a usage) as inline code. */
const code = (text) => `\`${text}\``;

/** The anchor GitHub gives a heading (as apps/e2e/src/docs/links.spec.ts spells them). */
function slug(heading) {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Makes anchors unique in the order of the headings, as GitHub does. */
function anchorMaker() {
  const used = new Set();
  return (heading) => {
    const base = slug(heading);
    let anchor = base;
    for (let n = 1; used.has(anchor); n++) anchor = `${base}-${n}`;
    used.add(anchor);
    return anchor;
  };
}

/** The text a command's help adds before or after itself (addHelpText), as commander writes it. */
function addedText(command, position) {
  const chunks = [];
  const context = { error: false, command, write: (text) => chunks.push(String(text)) };
  const lineage = [];
  for (let at = command; at; at = at.parent) lineage.push(at);
  if (position === 'before') {
    for (const ancestor of [...lineage].reverse()) ancestor.emit('beforeAllHelp', context);
    command.emit('beforeHelp', context);
  } else {
    command.emit('afterHelp', context);
    for (const ancestor of lineage) ancestor.emit('afterAllHelp', context);
  }
  return chunks.join('').trim();
}

/** An option's description, saying it is required (commander's help does not). */
function withRequired(description, mandatory) {
  return mandatory && !/\brequired\b/.test(description)
    ? `${description} (required)`.trim()
    : description;
}

/** Every visible command, depth first, with what its help shows. */
function commandsOf(program) {
  const commands = [];
  const visit = (command, path, depth) => {
    const help = command.createHelp();
    commands.push({
      command,
      path,
      depth,
      usage: help.commandUsage(command),
      description: help.commandDescription(command),
      aliases: command.aliases(),
      arguments: command.registeredArguments.map((argument) => ({
        term: help.argumentTerm(argument),
        description: help.argumentDescription(argument),
      })),
      options: help.visibleOptions(command).map((option) => ({
        term: help.optionTerm(option),
        description: withRequired(help.optionDescription(option), option.mandatory),
        help: option.long === '--help',
      })),
      before: addedText(command, 'before'),
      after: addedText(command, 'after'),
      subcommands: help
        .visibleCommands(command)
        .map((sub) => ({ command: sub, description: help.subcommandDescription(sub) })),
    });
    for (const sub of help.visibleCommands(command)) visit(sub, `${path} ${sub.name()}`, depth + 1);
  };
  visit(program, program.name(), 0);
  return commands;
}

const optionKey = (option) => `${option.term}\n${option.description}`;

/** The options a share of the commands take, most taken first, help last. */
function sharedOptions(commands) {
  const counted = new Map();
  for (const { options } of commands)
    for (const option of options) {
      const key = optionKey(option);
      counted.set(key, { option, count: (counted.get(key)?.count ?? 0) + 1 });
    }
  return [...counted.values()]
    .filter(({ count }) => count >= commands.length * SHARED_SHARE)
    .sort((a, b) => Number(a.option.help) - Number(b.option.help) || b.count - a.count)
    .map(({ option }) => option);
}

/** A Markdown table. */
function table(headers, rows) {
  return [
    `| ${headers.join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

/** The help text a command adds, kept as it prints. */
function textBlock(text) {
  return ['```text', text, '```', ''];
}

/** The page's Markdown before formatting. */
function markdown() {
  const program = buildProgram();
  const commands = commandsOf(program);
  const shared = sharedOptions(commands);
  const sharedKeys = new Set(shared.map(optionKey));
  const anchor = anchorMaker();
  for (const heading of [
    TITLE,
    'Installing and running',
    'An example session',
    'Output',
    'Signing in and tokens',
    'Environment variables',
    'Exit codes',
    'Shared options',
    'Commands',
  ])
    anchor(heading);
  const anchors = new Map();
  for (const entry of commands) anchors.set(entry.command, anchor(code(entry.path)));
  const link = (command) =>
    `[${code(commands.find((entry) => entry.command === command).path)}](#${anchors.get(command)})`;

  const lines = [`# ${TITLE}`, ''];
  lines.push(
    '<!-- Made by tools/cli-doc.mjs from the commands of apps/cli: change their descriptions,',
    'then build and run `npm run docs:cli`. -->',
    '',
  );
  lines.push(HEAD(), '');

  lines.push('## Shared options', '');
  lines.push(
    'These options mean the same in every command that takes them; each command below names ' +
      'those it takes.',
    '',
  );
  lines.push(
    ...table(
      ['option', 'description'],
      shared.map((option) => [code(option.term), cell(option.description)]),
    ),
    '',
  );

  lines.push('## Commands', '');
  lines.push(
    `Every command, as its \`--help\` prints it: ${link(program)} first, then each command ` +
      'and its subcommands.',
    '',
  );
  for (const entry of commands) {
    lines.push(`${'#'.repeat(Math.min(6, Math.max(3, entry.depth + 2)))} ${code(entry.path)}`, '');
    if (entry.before) lines.push(...textBlock(entry.before));
    if (entry.description) lines.push(inline(entry.description), '');
    lines.push(...textBlock(entry.usage));
    if (entry.aliases.length > 0)
      lines.push(`Also spelled: ${entry.aliases.map((alias) => code(alias)).join(', ')}.`, '');
    if (entry.arguments.length > 0)
      lines.push(
        ...table(
          ['argument', 'description'],
          entry.arguments.map((argument) => [code(argument.term), cell(argument.description)]),
        ),
        '',
      );
    const own = entry.options.filter((option) => !sharedKeys.has(optionKey(option)));
    if (own.length > 0)
      lines.push(
        ...table(
          ['option', 'description'],
          own.map((option) => [code(option.term), cell(option.description)]),
        ),
        '',
      );
    const common = entry.options.filter((option) => sharedKeys.has(optionKey(option)));
    if (common.length > 0)
      lines.push(
        `[Shared options](#shared-options): ${common.map((option) => code(option.term)).join(', ')}.`,
        '',
      );
    if (entry.subcommands.length > 0)
      lines.push(
        ...table(
          ['command', 'description'],
          entry.subcommands.map((sub) => [link(sub.command), cell(sub.description)]),
        ),
        '',
      );
    if (entry.after) lines.push(...textBlock(entry.after));
  }
  lines.push(OUTRO, '');
  return lines.join('\n');
}

/** The page as the built command line makes it today, formatted as prettier --check wants it. */
export function renderPage() {
  return formatPage(PAGE, markdown());
}

/** A Markdown page's parts by heading, each with its text (fenced lines are no headings). */
function partsOf(text) {
  const parts = new Map();
  let key = '(top)';
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#+\s+(.*)$/.exec(line);
    if (heading) key = heading[1];
    parts.set(key, `${parts.get(key) ?? ''}${line}\n`);
  }
  return parts;
}

/** What differs between the page as made and as found, one line per heading. */
export function pageDifferences(expected, actual) {
  return differencesByPart(expected, actual, partsOf, 'not a command');
}

await pageCommand(import.meta.url, {
  page: PAGE,
  render: renderPage,
  differences: pageDifferences,
  source: "the commands' help",
  remedy: 'Build, run `npm run docs:cli` and commit the page with the change.',
});
