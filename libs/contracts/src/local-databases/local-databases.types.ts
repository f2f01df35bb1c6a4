/** One database in the local daemon's list (docs/api/local-daemon.md). */
export interface LocalDatabase {
  name: string;
  /** Bytes on disk. */
  size: number;
  /** Ordinary and partitioned tables, as `tables` of the detail record counts them. */
  tableCount: number;
  /** When the daemon created the database, or first saw it. */
  createdAt: string;
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
