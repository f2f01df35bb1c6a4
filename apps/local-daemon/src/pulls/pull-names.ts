import { randomBytes } from 'node:crypto';

/**
 * The names of what a pull makes on the daemon's server before it is done: the database
 * it fills (renamed at the end; hidden from lists meanwhile) and the role that owns what
 * it restores until all of it passes to the login role. A crash leaves only these names,
 * which the daemon's next start removes. As a regular expression for PostgreSQL's `~`.
 */
export const PULL_NAME_PATTERN = '^pgcloud_pull_[0-9a-f]{16}$';

/** A fresh name of that pattern. */
export function pullName(): string {
  return `pgcloud_pull_${randomBytes(8).toString('hex')}`;
}
