import type { SocketAddress } from '@pgcloud/postgres';
import { quoteIdent, quoteLiteral, scramSha256Verifier, withSuperuser } from '@pgcloud/postgres';
import { REPLICATION_ROLE } from '../database-driver.js';

/** What a restored server must carry: the database's own names and passwords. */
export interface RestoredRoles {
  /** The name the application database and login role have in the archive. */
  archivedDatabaseName: string;
  databaseName: string;
  password: string;
  replicationPassword: string;
}

/**
 * Gives restored data the database's identity: renames the application database and
 * role when the restore went into a new database, and sets the stored passwords (as SCRAM
 * verifiers), so the restored server accepts exactly the database's credentials.
 */
export async function adoptRestoredRoles(
  address: SocketAddress,
  roles: RestoredRoles,
): Promise<void> {
  const from = quoteIdent(roles.archivedDatabaseName);
  const to = quoteIdent(roles.databaseName);
  await withSuperuser(address, 10_000, async (client) => {
    // The restored server may start read-only; this session is ours and may write.
    await client.query('SET default_transaction_read_only = off');
    if (roles.archivedDatabaseName !== roles.databaseName) {
      await client.query(`ALTER DATABASE ${from} RENAME TO ${to}`);
      await client.query(`ALTER ROLE ${from} RENAME TO ${to}`);
    }
    for (const [role, password] of [
      [roles.databaseName, roles.password],
      [REPLICATION_ROLE, roles.replicationPassword],
    ] as const) {
      const verifier = quoteLiteral(scramSha256Verifier(password));
      await client.query(`ALTER ROLE ${quoteIdent(role)} PASSWORD ${verifier}`);
    }
  });
}
