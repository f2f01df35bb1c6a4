import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pgBinDir, resolveOsUser, runPgTool } from '@pgcloud/postgres';

/** Every PostgreSQL data directory under `root` with a postmaster.pid: servers that may run. */
function dataDirsWithPostmaster(root: string, depth = 5): string[] {
  if (depth < 0 || !existsSync(root)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isFile() && entry.name === 'postmaster.pid') found.push(dirname(path));
    else if (entry.isDirectory()) found.push(...dataDirsWithPostmaster(path, depth - 1));
  }
  return found;
}

/**
 * Stops the database servers a stack's provisioner started under its DATA_DIR: they run
 * on their own, so stopping the provisioner alone would leave them behind.
 */
export async function stopLocalServers(dataDir: string, osUserName = 'postgres'): Promise<void> {
  const dataDirs = dataDirsWithPostmaster(dataDir);
  if (dataDirs.length === 0) return;
  const binDir = pgBinDir();
  const osUser = await resolveOsUser(osUserName);
  await Promise.all(
    dataDirs.map((pgdata) =>
      runPgTool(binDir, 'pg_ctl', ['-D', pgdata, 'stop', '-m', 'immediate', '-w'], {
        osUser,
      }).catch(
        () => undefined, // already stopped
      ),
    ),
  );
}
