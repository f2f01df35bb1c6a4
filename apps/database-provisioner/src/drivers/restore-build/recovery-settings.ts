import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OsUser } from '@pgcloud/postgres';
import { renderConf } from '@pgcloud/postgres';
import { writeOwned } from './restored-data.js';

// Recovery's settings (how WAL is fetched, where replay stops, what follows) live in the
// data directory's postgresql.auto.conf, which PostgreSQL reads after every other
// configuration file, between these two lines, while the checking server recovers; never
// on its command line. They are taken out once it has been promoted.
const BEGIN = 'pgcloud: recovery settings, taken out once the server is promoted';
const END = '# pgcloud: end of recovery settings\n';

/**
 * Writes `settings` as the data directory's recovery settings, in place of any written
 * before. Each value is quoted as a configuration file quotes it; one holding a line
 * break or NUL is refused before anything is written.
 */
export async function writeRecoverySettings(
  dataDir: string,
  settings: Readonly<Record<string, string>>,
  osUser: OsUser,
): Promise<void> {
  const block = renderConf(settings, BEGIN) + END;
  const rest = await withoutRecoverySettings(dataDir);
  await writeOwned(autoConfOf(dataDir), `${rest}${block}`, osUser);
}

/** Takes the recovery settings out of the data directory's configuration. */
export async function clearRecoverySettings(dataDir: string, osUser: OsUser): Promise<void> {
  await writeOwned(autoConfOf(dataDir), await withoutRecoverySettings(dataDir), osUser);
}

function autoConfOf(dataDir: string): string {
  return join(dataDir, 'postgresql.auto.conf');
}

async function withoutRecoverySettings(dataDir: string): Promise<string> {
  const text = await readFile(autoConfOf(dataDir), 'utf8').catch(() => '');
  const start = text.indexOf(`# ${BEGIN}\n`);
  if (start < 0) return text;
  const end = text.indexOf(END, start);
  return text.slice(0, start) + (end < 0 ? '' : text.slice(end + END.length));
}
