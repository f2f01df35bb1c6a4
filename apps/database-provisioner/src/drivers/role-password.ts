import { quoteIdent, quoteLiteral, scramSha256Verifier } from '@pgcloud/postgres';
import type pg from 'pg';

/**
 * ALTER ROLE ... PASSWORD on a superuser session of either driver, the password sent only
 * as a SCRAM verifier made here (so it never shows up in the server's log).
 */
export async function alterRolePassword(
  client: pg.Client,
  role: string,
  password: string,
): Promise<void> {
  const verifier = quoteLiteral(scramSha256Verifier(password));
  // A server at its storage limit is read-only by default; the superuser's session may write.
  await client.query('SET default_transaction_read_only = off');
  await client.query(`ALTER ROLE ${quoteIdent(role)} PASSWORD ${verifier}`);
}
