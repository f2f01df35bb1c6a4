import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { OnModuleInit } from '@nestjs/common';
import { Injectable, Logger } from '@nestjs/common';
import type { LocalArchiveDto } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { PgTools, SocketAddress } from '@pgcloud/postgres';
import { assertSocketPathFits, quoteIdent, withSuperuser } from '@pgcloud/postgres';
import { ServerDatabases } from '../databases/server-databases.js';
import { ManagedServer } from '../server/managed-server.js';
import { copyDatabase } from './dump-restore.js';
import { PULL_NAME_PATTERN, pullName } from './pull-names.js';
import {
  extractBackup,
  invalid,
  removeLeftScratch,
  removeScratch,
  scratchAddress,
  scratchPaths,
  startScratch,
} from './scratch-cluster.js';

/** Where pulls work (DAEMON_DATA_DIR/pulls) and the PostgreSQL binaries they run. */
export class PullPlace {
  constructor(
    readonly root: string,
    readonly tools: PgTools,
  ) {}
}

/**
 * Fills a new local database from a downloaded cloud backup
 * (docs/api/local-daemon.md#pulling-a-cloud-database-down): checked and extracted into a
 * scratch server of the daemon's own, its extensions checked against the local server
 * before anything is made there, copied by pg_dump and pg_restore into a database of a
 * temporary name, owned by the login role, then renamed. The scratch server and its files
 * are removed whatever happens, and so is a half-made database.
 */
@Injectable()
export class ArchivePulls implements OnModuleInit {
  private readonly logger = new Logger(ArchivePulls.name);

  constructor(
    private readonly place: PullPlace,
    private readonly server: ManagedServer,
    private readonly databases: ServerDatabases,
  ) {}

  /** What pulls cut short by a crash left: scratch servers, files, databases, roles. */
  async onModuleInit(): Promise<void> {
    const files = await removeLeftScratch(this.place.root, this.place.tools);
    const names = await this.server.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname ~ $1',
      [PULL_NAME_PATTERN],
    );
    for (const { datname } of names) await this.databases.dropIfExists(datname);
    const roles = await this.server.query<{ rolname: string }>(
      'SELECT rolname FROM pg_roles WHERE rolname ~ $1',
      [PULL_NAME_PATTERN],
    );
    for (const { rolname } of roles) await this.server.query(`DROP ROLE ${quoteIdent(rolname)}`);
    const left = files + names.length + roles.length;
    if (left > 0) this.logger.warn(`removed ${left} leftovers of pulls cut short`);
  }

  /** Makes `name` from the archive; answers once it exists under that name. */
  async restore(name: string, archive: LocalArchiveDto): Promise<void> {
    const temporary = pullName();
    await mkdir(this.place.root, { recursive: true, mode: 0o711 });
    const paths = scratchPaths(join(this.place.root, temporary.slice(-16)));
    assertSocketPathFits(paths.socketDir, scratchAddress(paths).port, {
      name: 'DAEMON_DATA_DIR',
      value: this.place.root,
    });
    const { tools } = this.place;
    try {
      await extractBackup(archive, paths, tools);
      const scratch = await startScratch(paths, tools);
      const source = await this.archivedDatabase(scratch);
      await this.assertExtensionsAvailable(scratch, source);
      await this.fill(temporary, scratch, source, name);
    } finally {
      await removeScratch(paths, tools).catch((err: Error) =>
        this.logger.error(`a pull's scratch server in ${paths.workDir} stays: ${err.message}`),
      );
    }
  }

  /** The application database the cloud server held: the one besides PostgreSQL's own. */
  private async archivedDatabase(scratch: SocketAddress): Promise<string> {
    const rows = await withSuperuser(scratch, 10_000, (client) =>
      client.query<{ datname: string }>(
        `SELECT datname FROM pg_database
         WHERE datallowconn AND NOT datistemplate AND datname <> 'postgres' ORDER BY datname`,
      ),
    );
    if (rows.rows.length !== 1)
      throw invalid(
        'fromArchive.path',
        `holds ${rows.rows.length} databases besides postgres; a cloud backup holds one`,
      );
    return rows.rows[0].datname;
  }

  /** 400 VALIDATION_ERROR naming every extension of the archive the local server lacks. */
  private async assertExtensionsAvailable(scratch: SocketAddress, source: string): Promise<void> {
    const used = await withSuperuser(
      scratch,
      10_000,
      (client) =>
        client.query<{ extname: string }>('SELECT extname FROM pg_extension ORDER BY extname'),
      source,
    );
    const available = await this.server.query<{ name: string }>(
      'SELECT name FROM pg_available_extensions',
    );
    const here = new Set(available.map((row) => row.name));
    const missing = used.rows.map((row) => row.extname).filter((name) => !here.has(name));
    if (missing.length === 0) return;
    throw new DomainError(
      'VALIDATION_ERROR',
      `The archive's database uses ${missing.length === 1 ? 'an extension' : 'extensions'} ` +
        `the local server does not have: ${missing.join(', ')}. Install ` +
        `${missing.length === 1 ? 'it' : 'them'} for the daemon's PostgreSQL, then pull again.`,
      missing.map((extension) => ({
        field: 'fromArchive',
        message: `the extension '${extension}' is not installed on the local server`,
      })),
    );
  }

  /**
   * Copies the archive's database into a new one of the temporary name, then renames it.
   * On the daemon's own server (its sessions are a superuser's) pg_restore runs as a
   * temporary superuser role, so extensions can be made, and everything it made then
   * passes to the login role; on an existing server it runs as the URL's role, which is
   * the login. Anything half-made is dropped on failure.
   */
  private async fill(
    temporary: string,
    scratch: SocketAddress,
    source: string,
    name: string,
  ): Promise<void> {
    const { owner } = this.server;
    const restorer = owner === undefined ? undefined : temporary;
    try {
      if (restorer)
        await this.server.query(`CREATE ROLE ${quoteIdent(restorer)} SUPERUSER NOLOGIN`);
      await this.databases.create(temporary, 'template0', owner);
      await copyDatabase(
        scratch,
        source,
        this.server.libpqEnv(temporary),
        this.place.tools,
        restorer,
      );
      if (restorer && owner)
        await this.server.withSession(temporary, async (client) => {
          await client.query(`REASSIGN OWNED BY ${quoteIdent(restorer)} TO ${quoteIdent(owner)}`);
          await client.query(`DROP OWNED BY ${quoteIdent(restorer)}`);
        });
      await this.server.query(
        `ALTER DATABASE ${quoteIdent(temporary)} RENAME TO ${quoteIdent(name)}`,
      );
    } catch (err) {
      await this.databases.dropIfExists(temporary).catch(() => undefined);
      if ((err as { code?: unknown }).code === '42P04')
        throw new DomainError('DATABASE_NAME_TAKEN', `The name '${name}' is taken on this server.`);
      throw err;
    } finally {
      if (restorer)
        await this.server
          .query(`DROP ROLE IF EXISTS ${quoteIdent(restorer)}`)
          .catch((err: Error) => this.logger.warn(`role ${restorer} stays: ${err.message}`));
    }
  }
}
