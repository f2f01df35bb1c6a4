import { checkTlsLogin } from '@pgcloud/postgres';
import type { DatabaseDriver, ServerEndpoint } from './database-driver.js';

/**
 * The server takes a login over TLS, verified against the deployment's CA, as the
 * database's login role with its stored password: what a database must pass before it is
 * `running` (made, restored, resized or branched). Throws otherwise.
 */
export async function assertTlsLogin(
  driver: DatabaseDriver,
  endpoint: ServerEndpoint,
  login: { name: string; password: string },
): Promise<void> {
  const encrypted = await checkTlsLogin({
    host: endpoint.host,
    port: endpoint.port,
    database: login.name,
    user: login.name,
    password: login.password,
    caPem: await driver.caCertificate(),
  });
  if (!encrypted) throw new Error('the server accepted a login without TLS');
}
