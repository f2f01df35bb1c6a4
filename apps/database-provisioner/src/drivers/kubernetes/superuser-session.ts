import { CATALOG_SEARCH_PATH, SUPERUSER, withSession } from '@pgcloud/postgres';
import type pg from 'pg';
import type { ServerEndpoint } from '../database-driver.js';

/**
 * How the driver logs in to a server as its superuser: over TLS, through its Service,
 * with a client certificate the deployment CA issued for the role (the server's pg_hba
 * takes the superuser by certificate only: it has no password).
 */
export interface SuperuserLogin {
  endpoint: ServerEndpoint;
  caPem: string;
  client: ClientCertificate;
}

/** A client certificate and its key, as PEM. */
export interface ClientCertificate {
  certPem: string;
  keyPem: string;
}

/** The driver's superuser certificate: issued on first use, then held in memory only. */
export class SuperuserCertificate {
  private issuing?: Promise<ClientCertificate>;

  constructor(private readonly issue: () => Promise<ClientCertificate>) {}

  get(): Promise<ClientCertificate> {
    this.issuing ??= this.issue().catch((err: unknown) => {
      this.issuing = undefined;
      throw err;
    });
    return this.issuing;
  }
}

/**
 * Runs `work` in a superuser session (database `postgres`) over TLS, the server's
 * certificate verified against the deployment CA and the endpoint's host (verify-full),
 * resolving names in the catalog only.
 */
export async function withTlsSuperuser<T>(
  login: SuperuserLogin,
  timeoutMs: number,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  return withSession(
    {
      host: login.endpoint.host,
      port: login.endpoint.port,
      user: SUPERUSER,
      database: 'postgres',
      options: CATALOG_SEARCH_PATH,
      ssl: {
        ca: login.caPem,
        cert: login.client.certPem,
        key: login.client.keyPem,
        rejectUnauthorized: true,
      },
      connectionTimeoutMillis: timeoutMs,
    },
    work,
  );
}
