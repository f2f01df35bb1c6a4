import type { SocketAddress } from '@pgcloud/postgres';
import { quoteIdent, quoteLiteral, scramSha256Verifier, withSuperuser } from '@pgcloud/postgres';
import type pg from 'pg';
import { REPLICATION_ROLE } from '../database-driver.js';
import { alterRolePassword } from '../role-password.js';

/** The roles and database a server is made for. */
export interface ApplicationRoles {
  databaseName: string;
  password: string;
  replicationPassword: string;
}

const DUPLICATE_OBJECT = '42710';
const DUPLICATE_DATABASE = '42P04';

/**
 * Creates what is missing of the login role, its database, and the replication role,
 * and closes the maintenance databases to everyone else. Passwords reach the server
 * only as SCRAM verifiers, so they never show up in its log (a failed CREATE ROLE logs
 * its statement); an existing role keeps its password, so a retried create changes
 * nothing.
 */
export async function ensureApplicationRoles(
  address: SocketAddress,
  roles: ApplicationRoles,
): Promise<void> {
  const name = quoteIdent(roles.databaseName);
  await withSuperuser(address, 10_000, async (client) => {
    await ensureRole(client, roles.databaseName, 'LOGIN', roles.password);
    await ensureRole(client, REPLICATION_ROLE, 'REPLICATION LOGIN', roles.replicationPassword);
    const database = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      roles.databaseName,
    ]);
    if (database.rowCount === 0) {
      await ignoring(DUPLICATE_DATABASE, client.query(`CREATE DATABASE ${name} OWNER ${name}`));
    }
    // The application sees only its own database.
    await client.query('REVOKE CONNECT ON DATABASE postgres FROM PUBLIC');
    await client.query('REVOKE CONNECT ON DATABASE template1 FROM PUBLIC');
    // pitr-worker manages its replication slot and samples the WAL position there, and
    // reads how far its pg_receivewal has synced in pg_stat_replication (whose details only
    // pg_read_all_stats sees). The role reads every byte through base backups anyway.
    await client.query(`GRANT CONNECT ON DATABASE postgres TO ${REPLICATION_ROLE}`);
    await client.query(`GRANT pg_read_all_stats TO ${REPLICATION_ROLE}`);
  });
}

async function ensureRole(
  client: pg.Client,
  role: string,
  attributes: string,
  password: string,
): Promise<void> {
  const found = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
  if (found.rowCount !== 0) return;
  const verifier = quoteLiteral(scramSha256Verifier(password));
  await ignoring(
    DUPLICATE_OBJECT,
    client.query(`CREATE ROLE ${quoteIdent(role)} ${attributes} PASSWORD ${verifier}`),
  );
}

// Two creates of one server at once both see "absent"; the loser's duplicate is success.
async function ignoring(code: string, query: Promise<unknown>): Promise<void> {
  await query.catch((err: { code?: string }) => {
    if (err.code !== code) throw err;
  });
}

/** The login role's new password, as a SCRAM verifier (never in the server's log). */
export async function setRolePassword(
  address: SocketAddress,
  role: string,
  password: string,
): Promise<void> {
  await withSuperuser(address, 10_000, (client) => alterRolePassword(client, role, password));
}
