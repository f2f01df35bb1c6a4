import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type {
  CreateLocalSnapshotDto,
  LocalDatabaseDetail,
  LocalDeleted,
  LocalSnapshot,
  LocalSnapshotList,
  ResetLocalDatabaseDto,
} from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { SnapshotEntry } from '../catalogue/snapshot-catalogue.js';
import { SnapshotCatalogue } from '../catalogue/snapshot-catalogue.js';
import {
  LocalDatabasesService,
  PG_ERRORS,
  pgCode,
  templateInUse,
} from '../databases/local-databases.service.js';
import { ServerDatabases } from '../databases/server-databases.js';
import { ManagedServer } from '../server/managed-server.js';

/**
 * Snapshots of local databases and resets to them (docs/api/local-daemon.md#snapshots). A
 * snapshot is a closed copy on the server (no connections: no list shows it, nobody
 * changes it), made by CREATE DATABASE ... TEMPLATE; a reset copies it back under the
 * database's name, ending the database's sessions.
 */
@Injectable()
export class LocalSnapshots {
  private readonly logger = new Logger(LocalSnapshots.name);

  constructor(
    private readonly databases: LocalDatabasesService,
    private readonly server: ServerDatabases,
    private readonly snapshots: SnapshotCatalogue,
    private readonly managed: ManagedServer,
  ) {}

  /**
   * Keeps a copy of the database as it is. Recorded first, so a name taken is refused
   * before anything is copied and a crash leaves a row without a copy (not listed, and
   * dropped with the database), never a copy nobody knows of.
   */
  async create(databaseName: string, request: CreateLocalSnapshotDto): Promise<LocalSnapshot> {
    const database = await this.databases.visible(databaseName);
    if (await this.snapshots.find(database.oid, request.name)) throw nameTaken(request.name);
    if (!(await this.server.idle(database.name))) throw templateInUse(database.name);
    const copy = copyName('snapshot');
    if (!(await this.snapshots.add(database.oid, request.name, copy)))
      throw nameTaken(request.name);
    try {
      await this.server.copyClosed(copy, database.name);
    } catch (err) {
      await this.snapshots.remove(database.oid, request.name);
      await this.server.dropIfExists(copy).catch(() => undefined);
      throw pgCode(err) === PG_ERRORS.objectInUse ? templateInUse(database.name) : err;
    }
    const entry = await this.snapshots.find(database.oid, request.name);
    if (!entry) throw snapshotNotFound(database.name, request.name); // deleted at once
    this.logger.log(`snapshot ${request.name} of ${database.name} taken`);
    return view(database.name, entry);
  }

  async list(databaseName: string): Promise<LocalSnapshotList> {
    const database = await this.databases.visible(databaseName);
    const entries = await this.snapshots.list(database.oid);
    return { snapshots: entries.map((entry) => view(database.name, entry)) };
  }

  async delete(databaseName: string, name: string): Promise<LocalDeleted> {
    const database = await this.databases.visible(databaseName);
    const entry = await this.snapshots.find(database.oid, name);
    if (!entry) throw snapshotNotFound(database.name, name);
    await this.server.dropIfExists(entry.serverDatabase);
    await this.snapshots.remove(database.oid, name);
    return { name, deleted: true };
  }

  /**
   * Brings the database back to the snapshot: a closed copy of it is made, the database's
   * catalogue row and snapshots move to that copy, the database is dropped (its sessions
   * ended) and the copy takes its name. A failure before the drop leaves it as it was.
   */
  async reset(databaseName: string, request: ResetLocalDatabaseDto): Promise<LocalDatabaseDetail> {
    const database = await this.databases.visible(databaseName);
    const entry = await this.snapshots.find(database.oid, request.snapshot);
    if (!entry) throw snapshotNotFound(database.name, request.snapshot);
    const copy = copyName('reset');
    const copyOid = await this.server.copyClosed(copy, entry.serverDatabase, this.managed.owner);
    await this.snapshots.moveDatabase(database.name, database.oid, copyOid);
    try {
      await this.server.drop(database.name);
    } catch (err) {
      await this.snapshots.moveDatabase(database.name, copyOid, database.oid);
      await this.server.dropIfExists(copy).catch(() => undefined);
      throw err;
    }
    await this.server.open(copy, database.name);
    this.logger.log(`${database.name} reset to its snapshot ${request.snapshot}`);
    return this.databases.get(database.name);
  }
}

/** A name for a closed copy on the server: the daemon's prefix and random hex. */
function copyName(kind: 'snapshot' | 'reset'): string {
  return `pgcloud_${kind}_${randomBytes(8).toString('hex')}`;
}

function view(database: string, entry: SnapshotEntry): LocalSnapshot {
  return {
    name: entry.name,
    database,
    size: entry.size,
    createdAt: entry.createdAt.toISOString(),
  };
}

function nameTaken(name: string): DomainError {
  return new DomainError(
    'SNAPSHOT_NAME_TAKEN',
    `The database already has a snapshot named '${name}'.`,
  );
}

function snapshotNotFound(database: string, name: string): DomainError {
  return new DomainError('SNAPSHOT_NOT_FOUND', `Database '${database}' has no snapshot '${name}'.`);
}
