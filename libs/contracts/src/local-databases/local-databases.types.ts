/** One database in the local daemon's list (docs/api/local-daemon.md). */
export interface LocalDatabase {
  name: string;
  /** Bytes on disk. */
  size: number;
  /** Ordinary and partitioned tables, as `tables` of the detail record counts them. */
  tableCount: number;
  /** When the daemon created the database, or first saw it. */
  createdAt: string;
  /** When the daemon drops it; null when never. */
  expiresAt: string | null;
  /** Dropped when the daemon stops. */
  temporary: boolean;
}

/** GET /databases of the local daemon. */
export interface LocalDatabaseList {
  databases: LocalDatabase[];
}

/** How to reach a local database: the daemon's login role, which owns what it creates. */
export interface LocalConnection {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  /** postgresql://user:password@host:port/database */
  connectionString: string;
}

/** A schema of a local database and its number of tables. */
export interface LocalSchema {
  name: string;
  tableCount: number;
}

/** An extension installed in a local database. */
export interface LocalExtension {
  name: string;
  version: string;
}

/** GET /databases/{name} and the answer of POST /databases (docs/api/local-daemon.md). */
export interface LocalDatabaseDetail {
  name: string;
  size: number;
  createdAt: string;
  expiresAt: string | null;
  temporary: boolean;
  tables: number;
  views: number;
  functions: number;
  indexes: number;
  schemas: LocalSchema[];
  extensions: LocalExtension[];
  connection: LocalConnection;
}

/** DELETE /databases/{name} of the local daemon. */
export interface LocalDeleted {
  name: string;
  deleted: true;
}

/** A snapshot of a local database (docs/api/local-daemon.md#snapshots). */
export interface LocalSnapshot {
  name: string;
  /** The database it is a copy of. */
  database: string;
  /** Bytes on disk. */
  size: number;
  createdAt: string;
}

/** GET /databases/{name}/snapshots of the local daemon, oldest first. */
export interface LocalSnapshotList {
  snapshots: LocalSnapshot[];
}
