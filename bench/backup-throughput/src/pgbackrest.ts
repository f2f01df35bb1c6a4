// pgBackRest beside pgcloud: a stanza for the bench's database with its repository in the
// same bucket of the same S3 (over HTTPS, as pgBackRest speaks S3 only over TLS), under a
// prefix of its own that is removed at the end.
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { OsUser, SocketAddress } from '@pgcloud/postgres';
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
import type { LocalS3Credentials } from '@pgcloud/devstack';

const STANZA = 'bench';
const SQL_TIMEOUT_MS = 30_000;

/** The bench's database server, as pgBackRest reaches it: on this host, by its socket. */
export interface BackedUpServer {
  pgdata: string;
  address: SocketAddress;
  /** Its log, where pg_ctl restart sends it again. */
  logFile: string;
}

/** Where pgBackRest's repository goes: the S3, its bucket, and the prefix of the bench. */
export interface Repository {
  s3: LocalS3Credentials & { tls: NonNullable<LocalS3Credentials['tls']> };
  bucket: string;
  prefix: string;
}

export class PgBackRest {
  private constructor(
    private readonly dir: string,
    private readonly osUser: OsUser,
    private readonly server: BackedUpServer,
  ) {}

  private get config(): string {
    return join(this.dir, 'pgbackrest.conf');
  }

  /**
   * Writes pgBackRest's configuration (zstd, as many processes as cores), turns WAL
   * archiving to its repository on for the server (archive_mode needs a restart), and
   * makes the stanza.
   */
  static async setUp(
    parent: string,
    osUser: OsUser,
    server: BackedUpServer,
    repository: Repository,
  ): Promise<PgBackRest> {
    await runAsOsUser('pgbackrest', ['version'], { osUser }).catch(() => {
      throw new Error(
        "bench:backup needs Debian's pgbackrest: apt-get install -y --no-install-recommends pgbackrest",
      );
    });
    const dir = await mkdtemp(join(parent, 'pgbackrest-'));
    await ensureOwnedDir(dir, osUser);
    const ca = join(dir, 'ca.crt');
    await copyFile(repository.s3.tls.certFile, ca);
    await chownFile(ca, osUser);
    const tls = new URL(repository.s3.tls.endpoint);
    const settings = [
      '[global]',
      'repo1-type=s3',
      `repo1-s3-endpoint=${tls.hostname}`,
      `repo1-storage-port=${tls.port}`,
      `repo1-s3-bucket=${repository.bucket}`,
      `repo1-s3-region=${repository.s3.region}`,
      `repo1-s3-key=${repository.s3.accessKeyId}`,
      `repo1-s3-key-secret=${repository.s3.secretAccessKey}`,
      'repo1-s3-uri-style=path',
      `repo1-storage-ca-file=${ca}`,
      `repo1-path=/${repository.prefix}`,
      'compress-type=zst',
      `process-max=${availableParallelism()}`,
      'start-fast=y',
      `log-path=${join(dir, 'log')}`,
      `lock-path=${join(dir, 'lock')}`,
      'log-level-console=warn',
      'log-level-file=off',
      '',
      `[${STANZA}]`,
      `pg1-path=${server.pgdata}`,
      `pg1-port=${server.address.port}`,
      `pg1-socket-path=${server.address.socketDir}`,
      '',
    ];
    const backRest = new PgBackRest(dir, osUser, server);
    await writeFile(backRest.config, settings.join('\n'), { mode: 0o600 });
    await chownFile(backRest.config, osUser);
    await backRest.archiveToRepository();
    await backRest.run(['stanza-create']);
    return backRest;
  }

  /** A full backup; answers its seconds and its label. */
  async fullBackup(): Promise<{ seconds: number; label: string }> {
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
  async restoreAndQuery(label: string, database: string, sql: string): Promise<string> {
    const dir = await mkdtemp(join(this.dir, 'restore-'));
    const pgdata = join(dir, 'data');
    await ensureOwnedDir(dir, this.osUser, 0o755);
    await ensureOwnedDir(pgdata, this.osUser);
    const port = this.server.address.port + 1;
    const binDir = pgBinDir();
    const pgCtl = (args: string[]) =>
      runPgTool(binDir, 'pg_ctl', ['-D', pgdata, ...args], { osUser: this.osUser });
    try {
      await this.run([
        `--set=${label}`,
        `--pg1-path=${pgdata}`,
        '--type=immediate',
        '--target-action=promote',
        'restore',
      ]);
      // Its own port and socket only, and no archiving into the bench's repository.
      const options = `-c port=${port} -c listen_addresses='' -c unix_socket_directories=${dir} -c ssl=off -c archive_mode=off`;
      await pgCtl(['-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '600', 'start']);
      const address = { socketDir: dir, port };
      for (;;) {
        const inRecovery = await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
          const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
          return rows[0]?.r ?? true;
        });
        if (!inRecovery) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const psql = ['-h', dir, '-p', String(port), '-U', 'postgres', '-d', database, '-XAtc', sql];
      const { stdout } = await runPgTool(binDir, 'psql', psql, { osUser: this.osUser });
      return stdout.trim();
    } finally {
      await pgCtl(['-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
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

  private async archiveToRepository(): Promise<void> {
    const command = `pgbackrest --config=${this.config} --stanza=${STANZA} archive-push %p`;
    await withSuperuser(this.server.address, SQL_TIMEOUT_MS, async (client) => {
      await client.query(`ALTER SYSTEM SET archive_mode = on`);
      await client.query(`ALTER SYSTEM SET archive_command = ${quoteLiteral(command)}`);
    });
    // pg_ctl restart takes the options the server was started with (postmaster.opts).
    const { pgdata, logFile } = this.server;
    await runPgTool(
      pgBinDir(),
      'pg_ctl',
      ['-D', pgdata, '-l', logFile, '-m', 'fast', '-w', 'restart'],
      {
        osUser: this.osUser,
      },
    );
  }

  private run(args: string[]): Promise<{ stdout: string }> {
    return runAsOsUser('pgbackrest', [`--config=${this.config}`, `--stanza=${STANZA}`, ...args], {
      osUser: this.osUser,
      timeoutMs: 3_600_000,
    });
  }
}
