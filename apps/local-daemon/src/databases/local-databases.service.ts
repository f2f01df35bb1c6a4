import { Injectable } from '@nestjs/common';
import type {
  CreateLocalDatabaseDto,
  LocalDatabase,
  LocalDatabaseDetail,
  LocalDatabaseList,
  LocalDeleted,
  UpdateLocalDatabaseDto,
} from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { CatalogueEntry } from '../catalogue/catalogue.js';
import { Catalogue } from '../catalogue/catalogue.js';
import { SnapshotCatalogue } from '../catalogue/snapshot-catalogue.js';
import { ManagedServer } from '../server/managed-server.js';
import { ArchivePulls } from '../pulls/archive-pulls.js';
import { DatabaseInspector } from './database-inspector.js';
import { requestedExpiry } from './lifetime.js';
import type { ServerDatabase } from './server-databases.js';
import { ServerDatabases } from './server-databases.js';

/** PostgreSQL's own databases: invisible through the daemon, like its catalogue. */
export const SYSTEM_DATABASES = ['postgres', 'template0', 'template1'];

/**
 * What a database without a template is made from: template0 is PostgreSQL's pristine
 * copy and takes no sessions, so nobody connected to template1 can make a create fail,
 * and the new database holds the same on an embedded or an existing server.
 */
const BLANK_TEMPLATE = 'template0';
const LIST_CONCURRENCY = 4;
export const PG_ERRORS = {
  invalidCatalogName: '3D000', // no such database
  adminShutdown: '57P01', // our session was ended: DROP DATABASE ... WITH (FORCE), say
  objectInUse: '55006',
  duplicateDatabase: '42P04',
};

/** The local daemon's rules for its databases (docs/api/local-daemon.md). */
@Injectable()
export class LocalDatabasesService {
  private readonly hidden: readonly string[];

  constructor(
    private readonly server: ManagedServer,
    private readonly databases: ServerDatabases,
    private readonly inspector: DatabaseInspector,
    private readonly catalogue: Catalogue,
    private readonly snapshots: SnapshotCatalogue,
    private readonly pulls: ArchivePulls,
  ) {
    this.hidden = [...SYSTEM_DATABASES, server.catalogueDatabase];
  }

  /** Every visible database with its size, table count and creation time. */
  async list(): Promise<LocalDatabaseList> {
    const found = await this.databases.usable(this.hidden);
    const counted = await mapLimited(found, LIST_CONCURRENCY, async (database) => {
      const tableCount = await this.inspector.tableCount(database.name).catch(ifGone(undefined));
      return tableCount === undefined ? undefined : { ...database, tableCount };
    });
    const present = counted.filter((database) => database !== undefined);
    await this.catalogue.prune();
    const entries = await this.catalogue.entries(present);
    const databases: LocalDatabase[] = present.map((database) => ({
      name: database.name,
      size: database.size,
      tableCount: database.tableCount,
      ...lifeOf(entries.get(database.name)),
    }));
    return { databases };
  }

  async get(name: string): Promise<LocalDatabaseDetail> {
    const database = await this.findVisible(name);
    if (database === undefined) throw databaseNotFound(name);
    return this.detail(database);
  }

  /**
   * Creates a database, blank, as a copy of a template or from a cloud backup. Checked in
   * the API's order: the template exists (404), then the name is free and the template
   * idle (409).
   */
  async create(request: CreateLocalDatabaseDto): Promise<LocalDatabaseDetail> {
    const { name, template, fromArchive } = request;
    const expiresAt = requestedExpiry(request, Date.now()) ?? null;
    if (template !== undefined && fromArchive !== undefined)
      throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
        { field: 'fromArchive', message: 'give template or fromArchive, not both' },
      ]);
    if (template !== undefined && (await this.findVisible(template)) === undefined)
      throw new DomainError('TEMPLATE_NOT_FOUND', `There is no database '${template}' to copy.`);
    if (this.hidden.includes(name) || (await this.databases.exists(name))) throw nameTaken(name);
    if (template !== undefined && !(await this.databases.idle(template)))
      throw templateInUse(template);
    if (fromArchive !== undefined) await this.pulls.restore(name, fromArchive);
    else
      await this.databases
        .create(name, template ?? BLANK_TEMPLATE, this.server.owner)
        .catch((err: unknown) => {
          throw createError(err, request);
        });
    const created = await this.databases.find(name, this.hidden);
    if (created === undefined) throw databaseNotFound(name); // dropped at once by someone else
    await this.catalogue.entries([created]);
    await this.catalogue.setLifetime(name, { expiresAt, temporary: request.temporary ?? false });
    return this.detail(created);
  }

  /** Moves or clears a database's expiry (docs/api/local-daemon.md#expiry). */
  async update(name: string, request: UpdateLocalDatabaseDto): Promise<LocalDatabaseDetail> {
    const expiresAt = requestedExpiry(request, Date.now());
    if (expiresAt === undefined)
      throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
        { field: 'expiresAt', message: 'give expiresAt (null for never) or ttlSeconds' },
      ]);
    const database = await this.findVisible(name);
    if (database === undefined) throw databaseNotFound(name);
    await this.catalogue.entries([database]);
    await this.catalogue.setLifetime(name, { expiresAt });
    return this.detail(database);
  }

  /** Drops a database, ending its sessions first, and its snapshots with it. */
  async delete(name: string): Promise<LocalDeleted> {
    const database = await this.findVisible(name);
    if (database === undefined) throw databaseNotFound(name);
    await this.databases.drop(name).catch((err: unknown) => {
      throw pgCode(err) === PG_ERRORS.invalidCatalogName ? databaseNotFound(name) : err;
    });
    await this.catalogue.forget(name);
    for (const copy of await this.snapshots.all(database.oid))
      await this.databases.dropIfExists(copy);
    await this.snapshots.removeAll(database.oid);
    return { name, deleted: true };
  }

  /** Drops the snapshots of databases that are gone, however they went. */
  async dropOrphanSnapshots(): Promise<void> {
    for (const copy of await this.snapshots.orphans()) await this.databases.dropIfExists(copy);
  }

  /** A visible database of that name, or DATABASE_NOT_FOUND; recorded in the catalogue. */
  async visible(name: string): Promise<ServerDatabase> {
    const database = await this.findVisible(name);
    if (database === undefined) throw databaseNotFound(name);
    await this.catalogue.entries([database]);
    return database;
  }

  private async detail(database: ServerDatabase): Promise<LocalDatabaseDetail> {
    const contents = await this.inspector.contents(database.name).catch(ifGone(undefined));
    if (contents === undefined) throw databaseNotFound(database.name);
    const entries = await this.catalogue.entries([database]);
    return {
      name: database.name,
      size: database.size,
      ...lifeOf(entries.get(database.name)),
      tables: contents.tables,
      views: contents.views,
      functions: contents.functions,
      indexes: contents.indexes,
      schemas: contents.schemas,
      extensions: contents.extensions,
      connection: this.server.connection(database.name),
    };
  }

  private async findVisible(name: string): Promise<ServerDatabase | undefined> {
    // PostgreSQL's names are 1 to 63 bytes without NUL: anything else names nothing.
    const bytes = Buffer.byteLength(name);
    if (bytes < 1 || bytes > 63 || name.includes('\0')) return undefined;
    return this.databases.find(name, this.hidden);
  }
}

function databaseNotFound(name: string): DomainError {
  return new DomainError('DATABASE_NOT_FOUND', `There is no database '${name}'.`);
}

function nameTaken(name: string): DomainError {
  return new DomainError('DATABASE_NAME_TAKEN', `The name '${name}' is taken on this server.`);
}

export function templateInUse(template: string): DomainError {
  return new DomainError(
    'TEMPLATE_IN_USE',
    `The template '${template}' has open connections; close them and try again.`,
  );
}

// A race lost after the checks: the same answers as the checks would have given.
function createError(err: unknown, request: CreateLocalDatabaseDto): unknown {
  const code = pgCode(err);
  if (code === PG_ERRORS.duplicateDatabase) return nameTaken(request.name);
  if (code === PG_ERRORS.objectInUse) return templateInUse(request.template ?? BLANK_TEMPLATE);
  if (code === PG_ERRORS.invalidCatalogName)
    return new DomainError(
      'TEMPLATE_NOT_FOUND',
      `There is no database '${request.template ?? BLANK_TEMPLATE}' to copy.`,
    );
  return err;
}

/** A catch handler: answers `fallback` when the database went away under us. */
function ifGone<T>(fallback: T): (err: unknown) => T {
  return (err) => {
    const code = pgCode(err);
    if (code === PG_ERRORS.invalidCatalogName || code === PG_ERRORS.adminShutdown) return fallback;
    throw err;
  };
}

export function pgCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A database's times as the API shows them, from its catalogue entry. */
function lifeOf(entry: CatalogueEntry | undefined) {
  return {
    createdAt: (entry?.createdAt ?? new Date()).toISOString(),
    expiresAt: entry?.expiresAt?.toISOString() ?? null,
    temporary: entry?.temporary ?? false,
  };
}

/** Maps items with at most `limit` calls in flight, keeping their order. */
async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
