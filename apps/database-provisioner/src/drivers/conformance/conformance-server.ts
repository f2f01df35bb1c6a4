import pg from 'pg';
import type { DatabaseDriver, ServerEndpoint, ServerSpec } from '../database-driver.js';
import { REPLICATION_ROLE } from '../database-driver.js';

/** One driver, on its platform, as the conformance suite drives it. */
export interface ConformanceHarness {
  driver: DatabaseDriver;
  /** The region new servers go to. */
  region: string;
  /** A port for a new server (the provisioner's range). */
  port(): Promise<number>;
  pgBinDir: string;
  /** Takes the server away as a lost machine or pod would: its postmaster killed. */
  lose(serverId: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The server the conformance suite makes, and how its tests reach it. Its fields are set
 * as the suite goes (the harness before the first test, the endpoint by the first).
 */
export class ConformanceServer {
  harness!: ConformanceHarness;
  spec!: ServerSpec;
  endpoint!: ServerEndpoint;
  caPem!: string;

  /** Work as the application role over TLS verified against the CA and the host. */
  async asApp<T>(work: (client: pg.Client) => Promise<T>, tls = true): Promise<T> {
    const client = new pg.Client({
      host: this.endpoint.host,
      port: this.endpoint.port,
      user: this.spec.databaseName,
      database: this.spec.databaseName,
      password: this.spec.password,
      ssl: tls ? { ca: this.caPem, rejectUnauthorized: true } : false,
      connectionTimeoutMillis: 5000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await work(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** The application role's TLS login to the server, with `password` (its own by default). */
  appLogin(password = this.spec.password) {
    return {
      ...this.endpoint,
      database: this.spec.databaseName,
      user: this.spec.databaseName,
      password,
      caPem: this.caPem,
    };
  }

  /** The rows of the suite's own table. */
  rows(): Promise<{ n: number }[]> {
    return this.asApp(
      async (client) => (await client.query<{ n: number }>('SELECT n FROM marks ORDER BY n')).rows,
    );
  }

  /** The replication role's login, as backup-service and pitr-worker use it. */
  replication() {
    return {
      ...this.endpoint,
      user: REPLICATION_ROLE,
      password: this.spec.replicationPassword,
      caPem: this.caPem,
    };
  }
}
