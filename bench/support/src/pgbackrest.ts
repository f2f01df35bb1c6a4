// pgBackRest beside pgcloud: a stanza for the bench's database with its repository in the
// same bucket of the same S3 (over HTTPS, as pgBackRest speaks S3 only over TLS), under a
// prefix of its own that is removed at the end.
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { OsUser } from '@pgcloud/postgres';
import {
  chownFile,
  ensureOwnedDir,
  pgBinDir,
  quoteLiteral,
  runAsOsUser,
  runPgTool,
  withSuperuser,
} from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { BackRestOptions, BackedUpServer, Repository } from './pgbackrest-config.js';
import { STANZA, configLines } from './pgbackrest-config.js';
import { untilWritable } from './promotion-wait.js';

const SQL_TIMEOUT_MS = 30_000;
// A restore to the backup's consistent point, promoted there.
const IMMEDIATE = ['--type=immediate', '--target-action=promote'];

/** A timed `pgbackrest restore`: its seconds in all, and of its two steps. */
export interface TimedRestore {
  /** When `pgbackrest restore` started (ms since the epoch): the steps follow from there. */
  startedAtMs: number;
  seconds: number;
  /** `pgbackrest restore`: the files fetched from the repository and decompressed. */
  restoreSeconds: number;
  /** pg_ctl start to a committed write: recovery (archive-get), promotion. */
  startSeconds: number;
}

/** A restored copy, started: its directory (the socket's too) and port. */
interface Restored {
  dir: string;
  port: number;
  startedAtMs: number;
  restoreSeconds: number;
  startSeconds: number;
}

export class PgBackRest {
  private constructor(
    private readonly dir: string,
    private readonly osUser: OsUser,
    private readonly server: BackedUpServer,
    private readonly asyncArchive: boolean,
  ) {}

  private get config(): string {
    return join(this.dir, 'pgbackrest.conf');
  }

  /**
   * Writes pgBackRest's configuration (zstd, as many processes as cores, files bundled if
   * the repository says so, archiving asynchronous with `asyncArchive`), turns WAL
   * archiving to its repository on for the server (archive_mode needs a restart), and
   * makes the stanza.
   */
  static async setUp(
    parent: string,
    osUser: OsUser,
    server: BackedUpServer,
    repository: Repository,
    { asyncArchive = false }: BackRestOptions = {},
  ): Promise<PgBackRest> {
    await runAsOsUser('pgbackrest', ['version'], { osUser }).catch(() => {
      throw new Error(
        "this bench needs Debian's pgbackrest: apt-get install -y --no-install-recommends pgbackrest",
      );
    });
    const dir = await mkdtemp(join(parent, 'pgbackrest-'));
    await ensureOwnedDir(dir, osUser);
    const ca = join(dir, 'ca.crt');
    await copyFile(repository.s3.tls.certFile, ca);
    await chownFile(ca, osUser);
    const spool = join(dir, 'spool');
    if (asyncArchive) await ensureOwnedDir(spool, osUser);
    const settings = configLines({ dir, ca, spool, server, repository, asyncArchive });
    const backRest = new PgBackRest(dir, osUser, server, asyncArchive);
    await writeFile(backRest.config, settings.join('\n'), { mode: 0o600 });
    await chownFile(backRest.config, osUser);
    await backRest.archiveToRepository();
    await backRest.run(['stanza-create']);
    return backRest;
  }

  /**
   * A full backup; answers its seconds and its label. WAL archiving into the repository is
   * turned on again first if the server lost it (an in-place restore writes a fresh
   * postgresql.auto.conf), outside the time.
   */
  async fullBackup(): Promise<{ seconds: number; label: string }> {
    await this.archiveToRepository();
    const started = performance.now();
    await this.run(['--type=full', 'backup']);
    const seconds = (performance.now() - started) / 1000;
    const { stdout } = await this.run(['--output=json', 'info']);
    const [info] = JSON.parse(stdout) as { backup: { label: string }[] }[];
    const label = info?.backup.at(-1)?.label;
    if (!label) throw new Error('pgBackRest lists no backup after one');
    return { seconds, label };
  }

  /**
   * `pgbackrest restore` of a backup into a fresh directory, recovered to its consistent
   * point (archive-get from the repository) and promoted; answers what `sql` returns there.
   */
  restoreAndQuery(label: string, database: string, sql: string): Promise<string> {
    return this.withRestored(label, IMMEDIATE, async ({ dir, port }) => {
      return this.query({ dir, port }, database, sql);
    });
  }

  /**
   * The time to a writable copy of a backup, as an operator gets one with pgBackRest:
   * `pgbackrest restore` into a fresh directory (files fetched and decompressed with
   * process-max processes), then the server started until recovery has reached the
   * backup's consistent point, it is promoted and a write commits there. Stopped and
   * removed after.
   */
  timedRestore(label: string): Promise<TimedRestore> {
    return this.withRestored(label, IMMEDIATE, ({ startedAtMs, restoreSeconds, startSeconds }) =>
      Promise.resolve({
        startedAtMs,
        seconds: restoreSeconds + startSeconds,
        restoreSeconds,
        startSeconds,
      }),
    );
  }

  /**
   * The same to a point in time: `pgbackrest restore --type=time --target=<targetTime>` of a
   * backup, the server started until recovery (archive-get of the WAL from the repository)
   * has reached the first commit past the target, it is promoted and a write commits; then
   * what `sql` answers in `database`. Stopped and removed after.
   */
  timedPitr(
    label: string,
    targetTime: string,
    database: string,
    sql: string,
  ): Promise<TimedRestore & { answer: string }> {
    // PostgreSQL and pgBackRest read a numeric zone offset, not ISO's `Z`.
    const target = targetTime.replace('T', ' ').replace(/Z$/, '+00');
    const args = ['--type=time', `--target=${target}`, '--target-action=promote'];
    return this.withRestored(label, args, async (restored) => ({
      startedAtMs: restored.startedAtMs,
      seconds: restored.restoreSeconds + restored.startSeconds,
      restoreSeconds: restored.restoreSeconds,
      startSeconds: restored.startSeconds,
      answer: await this.query(restored, database, sql),
    }));
  }

  /** Archiving off again, and the repository's objects and the bench's files gone. */
  async remove(bucket: ObjectStore, prefix: string): Promise<void> {
    await withSuperuser(this.server.address, SQL_TIMEOUT_MS, async (client) => {
      await client.query(`ALTER SYSTEM SET archive_command = ''`);
      await client.query('SELECT pg_reload_conf()');
    });
    await bucket.deletePrefix(`${prefix}/`);
    await rm(this.dir, { recursive: true, force: true });
  }

  /**
   * Turns WAL archiving into the repository on, unless the server has it already:
   * archive_mode needs a restart, archive_command only a reload.
   */
  private async archiveToRepository(): Promise<void> {
    const command = `pgbackrest --config=${this.config} --stanza=${STANZA} archive-push %p`;
    const mode = await withSuperuser(this.server.address, SQL_TIMEOUT_MS, async (client) => {
      const setting = async (name: string) =>
        (await client.query<{ v: string }>(`SELECT current_setting($1) AS v`, [name])).rows[0]?.v;
      const archiveMode = await setting('archive_mode');
      const archiveCommand = await setting('archive_command');
      if (archiveMode === 'on' && archiveCommand === command) return 'archiving';
      await client.query(`ALTER SYSTEM SET archive_mode = on`);
      await client.query(`ALTER SYSTEM SET archive_command = ${quoteLiteral(command)}`);
      if (archiveMode !== 'on') return 'restart';
      await client.query('SELECT pg_reload_conf()');
      return 'reloaded';
    });
    if (mode !== 'restart') return;
    // pg_ctl restart takes the options the server was started with (postmaster.opts).
    const { pgdata, logFile } = this.server;
    await runPgTool(
      pgBinDir(),
      'pg_ctl',
      ['-D', pgdata, '-l', logFile, '-m', 'fast', '-w', 'restart'],
      { osUser: this.osUser },
    );
  }

  /**
   * Restores a backup (`restoreArgs` say to what point) into a fresh directory and starts
   * it on a port and socket of its own, with no archiving into the bench's repository (its
   * archive-get with a spool and locks of its own, apart from the live server's pushes),
   * until it is promoted and a write commits; runs `use` on it, then stops it and removes
   * every file.
   */
  private async withRestored<T>(
    label: string,
    restoreArgs: readonly string[],
    use: (restored: Restored) => Promise<T>,
  ): Promise<T> {
    const dir = await mkdtemp(join(this.dir, 'restore-'));
    const pgdata = join(dir, 'data');
    await ensureOwnedDir(dir, this.osUser, 0o755);
    await ensureOwnedDir(pgdata, this.osUser);
    for (const own of ['spool', 'lock']) await ensureOwnedDir(join(dir, own), this.osUser);
    const port = this.server.address.port + 1;
    const binDir = pgBinDir();
    const pgCtl = (args: string[]) =>
      runPgTool(binDir, 'pg_ctl', ['-D', pgdata, ...args], { osUser: this.osUser });
    try {
      const startedAtMs = Date.now();
      const started = performance.now();
      await this.run([
        `--set=${label}`,
        `--pg1-path=${pgdata}`,
        `--recovery-option=restore_command=${this.archiveGet(dir, pgdata)}`,
        ...restoreArgs,
        'restore',
      ]);
      const restored = performance.now();
      const options = `-c port=${port} -c listen_addresses='' -c unix_socket_directories=${dir} -c ssl=off -c archive_mode=off`;
      const log = join(dir, 'server.log');
      await pgCtl(['-o', options, '-l', log, '-w', '-t', '3600', 'start']).catch(async (err) => {
        const tail = (await readFile(log, 'utf8').catch(() => '')).split('\n').slice(-15);
        throw new Error(`${(err as Error).message}\nserver log:\n${tail.join('\n')}`);
      });
      // pg_ctl answers once the server takes read-only sessions; it is writable only once
      // recovery has reached the backup's end and promotion has ended it.
      await untilWritable({ socketDir: dir, port });
      const startSeconds = (performance.now() - restored) / 1000;
      const restoreSeconds = (restored - started) / 1000;
      return await use({ dir, port, startedAtMs, restoreSeconds, startSeconds });
    } finally {
      await pgCtl(['-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * The copy's restore_command: archive-get as pgBackRest writes it, with a spool and locks
   * of the copy's own, so that an asynchronous archive-get never waits on the live server's
   * archive-push (both take the stanza's archive lock).
   */
  private archiveGet(dir: string, pgdata: string): string {
    return [
      'pgbackrest',
      `--config=${this.config}`,
      `--stanza=${STANZA}`,
      `--pg1-path=${pgdata}`,
      // pgBackRest refuses a spool path without asynchronous archiving.
      ...(this.asyncArchive ? [`--spool-path=${join(dir, 'spool')}`] : []),
      `--lock-path=${join(dir, 'lock')}`,
      'archive-get %f "%p"',
    ].join(' ');
  }

  /** psql as the superuser on a restored copy; answers its unaligned output. */
  private async query(
    restored: { dir: string; port: number },
    database: string,
    sql: string,
  ): Promise<string> {
    const { dir, port } = restored;
    const psql = ['-h', dir, '-p', String(port), '-U', 'postgres', '-d', database, '-XAtc', sql];
    const { stdout } = await runPgTool(pgBinDir(), 'psql', psql, { osUser: this.osUser });
    return stdout.trim();
  }

  private run(args: string[]): Promise<{ stdout: string }> {
    return runAsOsUser('pgbackrest', [`--config=${this.config}`, `--stanza=${STANZA}`, ...args], {
      osUser: this.osUser,
      timeoutMs: 3_600_000,
    });
  }
}
