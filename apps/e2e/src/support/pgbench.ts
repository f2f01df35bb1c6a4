import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ConnectionDetails } from '@pgcloud/contracts';
import { pgBinDir } from '@pgcloud/postgres';

/**
 * Runs pgbench against a database as its owner over TLS (`-i ...` to fill it, `-n -T ...`
 * to load it); `signal` stops a run early (SIGINT), which is no failure.
 */
export async function runPgbench(
  connection: ConnectionDetails,
  args: string[],
  signal?: AbortSignal,
): Promise<void> {
  const password = decodeURIComponent(new URL(connection.connection_string).password);
  const child = spawn(join(pgBinDir(), 'pgbench'), [...args, connection.database], {
    env: {
      ...process.env,
      PGHOST: connection.host,
      PGPORT: String(connection.port),
      PGUSER: connection.user,
      PGPASSWORD: password,
      PGSSLMODE: 'require',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  signal?.addEventListener('abort', () => child.kill('SIGINT'), { once: true });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0 && !signal?.aborted) throw new Error(`pgbench ${args[0]} failed: ${stderr}`);
}
