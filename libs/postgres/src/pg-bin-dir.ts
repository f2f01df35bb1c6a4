import { execFileSync } from 'node:child_process';

/** PostgreSQL's server binaries: the configured folder (PG_BIN_DIR), or where `pg_config --bindir` says. */
export function pgBinDir(configured?: string): string {
  return configured ?? execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
}
