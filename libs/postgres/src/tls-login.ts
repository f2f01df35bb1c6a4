import pg from 'pg';

/** A login to try: where, as whom, and the CA the server's certificate must chain to. */
export interface TlsLoginTarget {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  caPem: string;
  timeoutMs?: number;
}

/**
 * Logs in over TLS, verifying the certificate against `caPem` and `host` (verify-full),
 * runs `SELECT 1` and resolves whether the session is encrypted. Throws when the login
 * fails, with a message that never holds the password.
 */
export async function checkTlsLogin(target: TlsLoginTarget): Promise<boolean> {
  const timeoutMs = target.timeoutMs ?? 5000;
  const client = new pg.Client({
    host: target.host,
    port: target.port,
    database: target.database,
    user: target.user,
    password: target.password,
    // node-postgres checks the certificate's names against `host` (servername for names).
    ssl: { ca: target.caPem, rejectUnauthorized: true },
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  // A failed handshake also surfaces as an 'error' event; without a listener it would crash.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    const result = await client.query<{ ssl: boolean }>(
      'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
    );
    return result.rows[0]?.ssl === true;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const where = `${target.user}@${target.host}:${target.port}/${target.database}`;
    const code = (err as { code?: unknown }).code;
    throw new TlsLoginError(
      `TLS login as ${where} failed: ${redact(reason, target.password)}`,
      typeof code === 'string' ? code : undefined,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A failed TLS login; `code` is PostgreSQL's SQLSTATE or Node's error code when known. */
export class TlsLoginError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'TlsLoginError';
  }
}

function redact(text: string, secret: string): string {
  return secret.length > 0 ? text.replaceAll(secret, '***') : text;
}
