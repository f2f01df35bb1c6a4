import type { SocketAddress } from '@pgcloud/postgres';
import {
  quoteIdent,
  quoteLiteral,
  scramSha256Verifier,
  SUPERUSER,
  withSuperuser,
} from '@pgcloud/postgres';
import type pg from 'pg';
import type { SecretLookup, StandInCluster, StandInManagedRole } from './cnpg-cluster-fields.js';
import { basicAuthPassword } from './cnpg-cluster-fields.js';

const SQL_TIMEOUT_MS = 10_000;
// Roles CNPG keeps for itself (the superuser, the role its replicas stream as): a managed
// role may not be one of them.
const RESERVED_ROLES = new Set([SUPERUSER, 'streaming_replica']);

/** The application database and its owner that a bootstrap makes. */
export interface ApplicationDatabase {
  database: string;
  owner: string;
  /** The owner's password (a SCRAM verifier or plain), when the bootstrap names a Secret. */
  password?: string;
}

/**
 * What a Secret holds, as the server should store it: a verifier as it is (PostgreSQL
 * takes `SCRAM-SHA-256$...` and `md5...` in ALTER ROLE ... PASSWORD and stores it), plain
 * text turned into one here, so that no password reaches the server or its log.
 */
export function storedPassword(secretValue: string): string {
  if (secretValue.startsWith('SCRAM-SHA-256$') || /^md5[0-9a-f]{32}$/.test(secretValue))
    return secretValue;
  return scramSha256Verifier(secretValue);
}

/**
 * Makes the owner role (LOGIN) and the database it owns, as CNPG's bootstrap does, and
 * sets the owner's password when given. What exists already is kept (a clone brings its
 * own), only the ownership and password are set.
 */
export async function ensureApplicationDatabase(
  address: SocketAddress,
  app: ApplicationDatabase,
): Promise<void> {
  await superuserSession(address, async (client) => {
    const owner = quoteIdent(app.owner);
    if (!(await roleExists(client, app.owner))) await client.query(`CREATE ROLE ${owner} LOGIN`);
    if (app.password !== undefined)
      await client.query(
        `ALTER ROLE ${owner} PASSWORD ${quoteLiteral(storedPassword(app.password))}`,
      );
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      app.database,
    ]);
    const database = quoteIdent(app.database);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${database} OWNER ${owner}`);
    else await client.query(`ALTER DATABASE ${database} OWNER TO ${owner}`);
  });
}

/**
 * Applies `spec.managed.roles` and the superuser's password, as CNPG's instance manager
 * does: each role present with exactly the attributes asked (CNPG's defaults for those
 * left out: no LOGIN, INHERIT, no limit), its password from its Secret when one is
 * named; `ensure: absent` drops it. The superuser `postgres` gets the superuserSecret's
 * password when enableSuperuserAccess is true, and no password otherwise (CNPG's default).
 */
export async function applyManagedRoles(
  address: SocketAddress,
  cluster: StandInCluster,
  secrets: SecretLookup,
): Promise<void> {
  const statements = [
    superuserPasswordStatement(cluster, secrets),
    ...(cluster.spec.managed?.roles ?? []).flatMap((role) => roleStatements(role, secrets)),
  ];
  await superuserSession(address, async (client) => {
    for (const statement of statements) {
      if (statement.unlessExists && (await roleExists(client, statement.unlessExists))) continue;
      await client.query(statement.sql);
    }
  });
}

interface RoleStatement {
  sql: string;
  /** Skipped when this role exists already (the CREATE before the ALTER). */
  unlessExists?: string;
}

function superuserPasswordStatement(cluster: StandInCluster, secrets: SecretLookup): RoleStatement {
  const role = quoteIdent(SUPERUSER);
  if (cluster.spec.enableSuperuserAccess !== true)
    return { sql: `ALTER ROLE ${role} PASSWORD NULL` };
  const secretName = cluster.spec.superuserSecret?.name;
  // CNPG would generate `<cluster>-superuser`; the stand-in makes no Secrets.
  if (!secretName) throw new Error('enableSuperuserAccess needs spec.superuserSecret here');
  const password = storedPassword(basicAuthPassword(secrets, secretName, SUPERUSER));
  return { sql: `ALTER ROLE ${role} PASSWORD ${quoteLiteral(password)}` };
}

function roleStatements(role: StandInManagedRole, secrets: SecretLookup): RoleStatement[] {
  if (RESERVED_ROLES.has(role.name) || role.name.startsWith('pg_'))
    throw new Error(`CNPG reserves the role '${role.name}': it cannot be a managed role`);
  const name = quoteIdent(role.name);
  if (role.ensure === 'absent') return [{ sql: `DROP ROLE IF EXISTS ${name}` }];
  const flags = [
    role.login === true ? 'LOGIN' : 'NOLOGIN',
    role.replication === true ? 'REPLICATION' : 'NOREPLICATION',
    role.superuser === true ? 'SUPERUSER' : 'NOSUPERUSER',
    role.inherit === false ? 'NOINHERIT' : 'INHERIT',
    `CONNECTION LIMIT ${Math.trunc(role.connectionLimit ?? -1)}`,
  ];
  if (role.passwordSecret) {
    const password = basicAuthPassword(secrets, role.passwordSecret.name, role.name);
    flags.push(`PASSWORD ${quoteLiteral(storedPassword(password))}`);
  }
  return [
    { sql: `CREATE ROLE ${name}`, unlessExists: role.name },
    { sql: `ALTER ROLE ${name} WITH ${flags.join(' ')}` },
    ...(role.inRoles ?? []).map((member) => ({ sql: `GRANT ${quoteIdent(member)} TO ${name}` })),
  ];
}

async function roleExists(client: pg.Client, role: string): Promise<boolean> {
  const found = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
  return found.rowCount !== 0;
}

// The operator's session may write even where the Cluster's parameters make sessions read-only.
function superuserSession(address: SocketAddress, work: (client: pg.Client) => Promise<void>) {
  return withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
    await client.query('SET default_transaction_read_only = off');
    await work(client);
  });
}
