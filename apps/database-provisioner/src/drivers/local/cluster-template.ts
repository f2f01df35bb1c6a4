import type { OsUser } from '@pgcloud/postgres';
import { fsyncPath, runPgTool } from '@pgcloud/postgres';
import { randomBytes } from 'node:crypto';
import { access, appendFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SERVER_CONF_FILE } from './cluster-config.js';

/** The superuser of every local server: fixed, whatever the OS user is called. */
export const SUPERUSER = 'postgres';

/**
 * Makes the template cluster every server is copied from, once: initdb takes about half
 * a second, a copy a few milliseconds. initdb writes into a private directory that is
 * renamed into place, so a crash leaves no half-made template and, of two builders at
 * once, the first rename wins and the other discards its copy.
 */
export async function ensureTemplate(
  templateDir: string,
  binDir: string,
  osUser: OsUser,
): Promise<void> {
  if (await isCluster(templateDir)) return;
  const building = `${templateDir}.building-${randomBytes(6).toString('hex')}`;
  try {
    await runPgTool(binDir, 'initdb', initdbArgs(building), { osUser });
    // A strict include: a server whose own settings are missing fails to start rather
    // than coming up on PostgreSQL's defaults (port 5432, no TLS).
    await appendFile(
      `${building}/postgresql.conf`,
      `\n# pgcloud: each server's own settings, last so that they win.\ninclude '${SERVER_CONF_FILE}'\n`,
    );
    // initdb ran with --no-sync: one sync after our change covers both.
    await runPgTool(binDir, 'initdb', ['--sync-only', `--pgdata=${building}`], { osUser });
    await rename(building, templateDir).catch(async (err: NodeJS.ErrnoException) => {
      if (!(err.code === 'ENOTEMPTY' || err.code === 'EEXIST') || !(await isCluster(templateDir)))
        throw err;
    });
    await fsyncPath(dirname(templateDir));
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

function initdbArgs(pgdata: string): string[] {
  return [
    `--pgdata=${pgdata}`,
    `--username=${SUPERUSER}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--encoding=UTF8',
    '--locale=C.UTF-8',
    '--data-checksums',
    '--no-sync',
  ];
}

async function isCluster(dir: string): Promise<boolean> {
  return access(`${dir}/PG_VERSION`).then(
    () => true,
    () => false,
  );
}
