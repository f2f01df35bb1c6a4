import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type {
  Backup,
  ConnectionDetails,
  Database,
  Project,
  RecoveryWindow,
  Restore,
  TokenList,
  User,
} from '@pgcloud/contracts';
import { ApiClient, eventuallyDefined, freePort, signIn, submitDeviceForm } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { CliUser, screenOf } from '../support/cli.js';
import { psql } from '../support/databases.js';
import { recoveryWindow, waitForArchive } from '../support/pitr.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';
import { TamperingProxy } from '../support/tampering-proxy.js';

/**
 * The command line as a person uses it: `pgcloud` run as a child process against the real
 * stack, signed in through the device flow, its `--json` answers compared with what the
 * API answers for the same thing.
 */
describe('pgcloud command line', () => {
  let user: CliUser;
  let api: ApiClient;
  let login: string;
  let project: Project;
  const path = () => `/projects/${project.id}/databases/shop`;
  const inShop = () => ['--project', project.name, '--db', 'shop'];

  before(async () => {
    const stack = await sharedStack();
    user = new CliUser(stack.baseUrl);
    login = uniqueLogin('cli');
  });

  it('signs in with the device flow: a code approved on the page, a 0600 file, a token that works', async () => {
    const running = user.start(['login', '--no-browser', '--json']);
    const [, code] = await running.stderrMatch(
      /enter the code ([B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4})/,
    );
    assert.ok(code);
    const page = await submitDeviceForm(await newClient(), {
      user_code: code,
      login,
      action: 'approve',
    });
    assert.equal(page.status, 200);
    assert.equal(await running.exited, 0, running.stderr);
    const signedIn = JSON.parse(running.stdout) as User;
    assert.equal(signedIn.login, login);
    assert.ok(
      !running.stdout.includes('pgc_') && !running.stderr.includes('pgc_'),
      'no token printed',
    );

    assert.equal(statSync(user.credentialsFile).mode & 0o777, 0o600);
    api = new ApiClient(user.apiUrl, savedToken(user));
    const me = expectData<User>(await api.get('/auth/me'), 200);
    assert.equal(me.id, signedIn.id);
    assert.deepEqual(await user.json(['whoami']), me);
  });

  it('manages projects and regions, answering --json with what the API answers', async () => {
    project = await user.json<Project>(['projects', 'create', 'cli-shop']);
    assert.equal(project.name, 'cli-shop');
    assert.deepEqual(
      await user.json(['projects', 'get', 'cli-shop']),
      expectData(await api.get(`/projects/${project.id}`), 200),
    );
    assert.deepEqual(
      await user.json(['projects', 'list']),
      expectData(await api.get('/projects'), 200),
    );
    assert.deepEqual(await user.json(['regions']), expectData(await api.get('/regions'), 200));
    // `use` answers the project as the list shows it.
    const { projects } = expectData<{ projects: Project[] }>(await api.get('/projects'), 200);
    assert.deepEqual(
      await user.json(['use', 'cli-shop']),
      projects.find((listed) => listed.id === project.id),
    );
  });

  it('creates a database with --wait until it runs, and shows it and its URL as the API does', async () => {
    // `use` chose the project: no --project from here on for db.
    const created = await user.json<Database>(['db', 'create', 'shop', '--wait']);
    assert.equal(created.status, 'running');
    // storage.used_bytes is measured as the server grows: between two reads it may move.
    const unmeasured = (database: Database) => ({
      ...database,
      storage: { ...database.storage, used_bytes: 0 },
    });
    assert.deepEqual(unmeasured(created), unmeasured(expectData(await api.get(path()), 200)));
    assert.deepEqual(unmeasured(await user.json(['db', 'get', 'shop'])), unmeasured(created));
    const listed = await user.json<{ databases: Database[] }>(['db', 'list']);
    const fromApi = expectData<{ databases: Database[] }>(
      await api.get(`/projects/${project.id}/databases`),
      200,
    );
    assert.deepEqual(listed.databases.map(unmeasured), fromApi.databases.map(unmeasured));
    const url = await user.json<ConnectionDetails>(['db', 'url', 'shop']);
    assert.deepEqual(url, expectData(await api.get(`${path()}/url`), 200));
    // psql through the CLI, the server verified against the deployment's CA.
    const psqlRun = await user.run([
      'db',
      'psql',
      'shop',
      '--',
      '-XAtc',
      "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('before'); SELECT count(*) FROM notes",
    ]);
    assert.equal(psqlRun.code, 0, psqlRun.stderr);
    assert.match(psqlRun.stdout, /^1$/m);
  });

  it('backs up with --wait, downloads with a verified checksum, and restores in place with --wait', async () => {
    const backup = await user.json<Backup>(['backups', 'create', '--wait', ...inShop()]);
    assert.equal(backup.status, 'completed');
    assert.deepEqual(backup, expectData(await api.get(`${path()}/backups/${backup.id}`), 200));
    assert.deepEqual(
      await user.json(['backups', 'list', ...inShop()]),
      expectData(await api.get(`${path()}/backups`), 200),
    );

    const file = join(user.home, 'shop.tar.zst');
    const downloaded = await user.run(['backups', 'download', backup.id, '-o', file, ...inShop()]);
    assert.equal(downloaded.code, 0, downloaded.stderr);
    const bytes = readFileSync(file);
    assert.equal(bytes.length, backup.size_bytes);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), backup.checksum_sha256);

    const { connection_string } = expectData<ConnectionDetails>(
      await api.get(`${path()}/url`),
      200,
    );
    await psql(connection_string, "INSERT INTO notes VALUES ('after')");
    const restore = await user.json<Restore>(['restore', backup.id, '--wait', ...inShop()]);
    assert.equal(restore.status, 'completed', restore.error);
    assert.deepEqual(restore, expectData(await api.get(`${path()}/restores/${restore.id}`), 200));
    assert.equal(
      await psql(connection_string, "SELECT string_agg(body, ',') FROM notes"),
      'before',
    );
  });

  it('refuses a download whose bytes were altered in transit, and leaves no file', async () => {
    const { backups } = expectData<{ backups: Backup[] }>(await api.get(`${path()}/backups`), 200);
    const backup = backups.find((candidate) => candidate.status === 'completed');
    assert.ok(backup);
    const proxy = await TamperingProxy.start(user.apiUrl);
    try {
      const folder = join(user.home, 'tampered');
      const file = join(folder, 'copy.tar.zst');
      const run = await user.run(['backups', 'download', backup.id, '-o', file, ...inShop()], {
        PGCLOUD_API_URL: proxy.url,
        PGCLOUD_TOKEN: savedToken(user),
      });
      assert.equal(proxy.tampered, 1, 'the download went through the proxy');
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /checksum/i);
      assert.equal(existsSync(file), false, 'nothing under the requested name');
      assert.deepEqual(existsSync(folder) ? readdirSync(folder) : [], [], 'no partial file either');
    } finally {
      await proxy.stop();
    }
  });

  it('enables PITR, shows its window, and restores `latest` into a new database with --wait', async () => {
    const { connection_string } = expectData<ConnectionDetails>(
      await api.get(`${path()}/url`),
      200,
    );
    await user.json(['pitr', 'enable', '--retention-days', '1', ...inShop()]);
    const status = await user.json<{ config: Record<string, unknown> }>([
      'pitr',
      'status',
      ...inShop(),
    ]);
    // The window and the archive's figures move as the first segments arrive, between the
    // two reads; the rest is the API's answer.
    const settled = ({ recovery_window: _w, archive: _a, ...rest }: Record<string, unknown>) =>
      rest;
    assert.deepEqual(
      settled(status.config),
      settled(expectData<Record<string, unknown>>(await api.get(`${path()}/pitr/config`), 200)),
    );
    assert.ok('recovery_window' in status.config && 'archive' in status.config);
    await waitForArchive(api, `${path()}/pitr`);
    await psql(connection_string, "INSERT INTO notes VALUES ('pitr')");
    const committed = Date.now();
    await eventuallyDefined('the window covers the last insert', async () => {
      const window = await recoveryWindow(api, `${path()}/pitr`);
      return window.to && Date.parse(window.to) >= committed ? window : undefined;
    });
    const window = await user.json<RecoveryWindow>(['pitr', 'window', ...inShop()]);
    const fromApi = await recoveryWindow(api, `${path()}/pitr`);
    assert.equal(window.from, fromApi.from);
    assert.equal(window.base_backup_time, fromApi.base_backup_time);
    assert.ok(window.to && fromApi.to && Date.parse(window.to) <= Date.parse(fromApi.to));

    const restore = await user.json<Restore>([
      'pitr',
      'restore',
      '--to',
      'latest',
      '--into',
      'shop-copy',
      '--wait',
      ...inShop(),
    ]);
    assert.equal(restore.status, 'completed', restore.error);
    assert.deepEqual(
      restore,
      expectData(await api.get(`${path()}/pitr/restores/${restore.id}`), 200),
    );
    const copy = await user.json<ConnectionDetails>(['db', 'url', 'shop-copy']);
    assert.equal(
      await psql(copy.connection_string, "SELECT string_agg(body, ',' ORDER BY body) FROM notes"),
      'before,pitr',
    );
  });

  it('exits 3 without a token, 4 for an unknown project, 5 for a taken name, 6 when the API is down, 2 for a bad flag', async () => {
    const stranger = new CliUser(user.apiUrl);
    const noToken = await stranger.run(['projects', 'list']);
    assert.equal(noToken.code, 3, noToken.stderr);
    assert.match(noToken.stderr, /pgcloud login/);

    const unknown = await user.run(['db', 'list', '--project', 'no-such-project']);
    assert.equal(unknown.code, 4, unknown.stderr);

    const taken = await user.run(['projects', 'create', 'cli-shop', '--json']);
    assert.equal(taken.code, 5, taken.stderr);
    const error = JSON.parse(taken.stderr) as { code: string; message: string; request_id: string };
    assert.equal(error.code, 'PROJECT_NAME_TAKEN');
    assert.match(error.request_id, /\S/);

    // Signed in, but nothing answers where the API was.
    const down = await user.run(['projects', 'list'], {
      PGCLOUD_API_URL: `http://127.0.0.1:${await freePort()}`,
      PGCLOUD_TOKEN: savedToken(user),
    });
    assert.equal(down.code, 6, down.stderr);
    assert.match(down.stderr, /cannot reach/);

    const badFlag = await user.run(['projects', 'list', '--no-such-flag']);
    assert.equal(badFlag.code, 2, badFlag.stderr);
    assert.match(badFlag.stderr, /unknown option/);
  });

  it('makes an API key for a machine, lists it without its secret and revokes it; --token is refused', async () => {
    const made = await user.run(['tokens', 'create', 'ci deploy', '--expires-in-days', '30', '-q']);
    assert.equal(made.code, 0, made.stderr);
    const key = made.stdout.trim();
    assert.match(key, /^pgc_[0-9A-Za-z]{40}$/);
    // A machine uses the key from its environment, as a CI job would.
    const machine = new CliUser(user.apiUrl);
    const whoami = await machine.json<User>(['whoami'], { PGCLOUD_TOKEN: key });
    assert.equal(whoami.login, login);
    const { tokens } = await user.json<TokenList>(['tokens', 'list']);
    const listed = tokens.find((t) => t.name === 'ci deploy');
    assert.ok(listed && listed.kind === 'api_key' && !listed.current);
    const table = await user.run(['tokens', 'list']);
    assert.ok(!table.stdout.includes(key), 'the list never shows the secret');
    assert.match(table.stdout, /device sign-in \(this one\)/);

    const flagged = await machine.run(['whoami', '--token', key]);
    assert.equal(flagged.code, 2, flagged.stderr);
    assert.match(flagged.stderr, /visible to every user of this machine/);

    const revoked = await user.run(['tokens', 'revoke', listed.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const refused = await machine.run(['whoami'], { PGCLOUD_TOKEN: key });
    assert.equal(refused.code, 3, refused.stderr);
  });

  it('logout --all revokes every token of the account', async () => {
    const everywhere = uniqueLogin('cli-all');
    const laptop = await signIn(await newClient(), everywhere);
    const desktop = await signIn(await newClient(), everywhere);
    const machine = new CliUser(user.apiUrl);
    const out = await machine.run(['logout', '--all'], { PGCLOUD_TOKEN: laptop.token });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /2 token\(s\) of your account revoked/);
    for (const signedIn of [laptop, desktop])
      expectError(await signedIn.api.get('/auth/me'), 401, 'AUTH_REQUIRED');
    expectData(await api.get('/auth/me'), 200); // another account's token still works
  });

  it('login refuses a verification address that is not https: or http: on this machine', async () => {
    for (const hostile of ['javascript:alert(document.cookie)', 'file:///etc/passwd']) {
      const polls: string[] = [];
      const server = createServer((req, res) => {
        polls.push(req.url ?? '');
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            success: true,
            data: {
              device_code: 'x'.repeat(43),
              user_code: 'BCDF-GHJK',
              verification_uri: hostile,
              expires_in: 900,
              interval: 1,
            },
          }),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        const run = await new CliUser(`http://127.0.0.1:${port}`).run(['login']);
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, /neither https: nor http: on this machine/);
        assert.ok(!run.stderr.includes(hostile), 'the address is not shown');
        assert.deepEqual(polls, ['/auth/device'], 'no polling after the refusal');
      } finally {
        server.close();
      }
    }
  });

  it('shows the progress of backups create --wait and a table of projects on a terminal', async () => {
    const backup = await user.onTerminal(['backups', 'create', '--wait', ...inShop()]);
    assert.equal(backup.code, 0, backup.stdout);
    const redraws = backup.stdout
      .split('\r\x1b[2K')
      .slice(1)
      .filter((frame) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /.test(frame));
    assert.ok(
      redraws.length >= 3,
      `a live progress line was drawn: ${JSON.stringify(backup.stdout)}`,
    );
    const screen = screenOf(backup.stdout);
    assert.ok(
      screen.some((line) => /completed/.test(line)),
      screen.join('\n'),
    );
    console.log(`live lines of pgcloud backups create --wait:\n${redraws.slice(-3).join('\n')}`);
    console.log(`screen of pgcloud backups create --wait:\n${screen.join('\n')}`);

    const table = await user.onTerminal(['projects', 'list']);
    assert.equal(table.code, 0, table.stdout);
    const lines = screenOf(table.stdout);
    assert.match(lines[0] ?? '', /^ID\s+NAME\s+REGION\s+CREATED$/);
    assert.ok(
      lines.some((line) => line.includes(project.id) && line.includes('cli-shop')),
      lines.join('\n'),
    );
    console.log(`screen of pgcloud projects list:\n${lines.join('\n')}`);
  });

  it('lists every flag of every command with a one-line description in --help', async () => {
    const seen: string[] = [];
    const visit = async (command: string[]): Promise<void> => {
      const run = await user.run([...command, '--help']);
      assert.equal(run.code, 0, `${command.join(' ')} --help: ${run.stderr}`);
      seen.push(command.join(' ') || 'pgcloud');
      const sections = sectionsOf(run.stdout);
      for (const line of [...(sections.get('Options') ?? []), ...(sections.get('Arguments') ?? [])])
        assert.match(
          line,
          /^ {2}\S.*?\s{2,}\S/,
          `${command.join(' ')}: "${line}" has a description`,
        );
      for (const line of sections.get('Commands') ?? []) {
        const name = /^ {2}([a-z-]+)/.exec(line)?.[1];
        assert.ok(name, line);
        assert.match(line, /\s{2,}\S/, `${command.join(' ')} ${name} has a description`);
        await visit([...command, name]);
      }
    };
    await visit([]);
    for (const command of [
      'login',
      'tokens create',
      'projects create',
      'db create',
      'backups download',
      'restore',
      'pitr restore',
      'local create',
    ])
      assert.ok(seen.includes(command), `${command} has help (${seen.join(', ')})`);
  });
});

/** The token `pgcloud login` saved for `user`. */
function savedToken(user: CliUser): string {
  return (JSON.parse(readFileSync(user.credentialsFile, 'utf8')) as { token: string }).token;
}

/** The entry lines of each section of a commander help text, wrapped lines left out. */
function sectionsOf(help: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of help.split('\n')) {
    const heading = /^(\w+):$/.exec(line);
    if (heading?.[1]) sections.set(heading[1], (current = []));
    else if (/^ {2}\S/.test(line)) current?.push(line);
    else if (line === '') current = undefined;
  }
  return sections;
}
