import { rpc } from '../catalogue.js';
import { DatabaseRef } from '../databases/databases.messages.js';
import { DrillRef } from './drills.messages.js';
import type { Drill, DrillList } from './drills.types.js';

/** Restore drill message patterns answered by database-provisioner, which runs them. */
export const DRILL_PATTERNS = {
  /** A manual drill, pending (a quota per day; one at a time per database). */
  create: rpc<DatabaseRef, Drill>('databases', 'drills.create', DatabaseRef),
  /** Newest first. */
  list: rpc<DatabaseRef, DrillList>('databases', 'drills.list', DatabaseRef),
  /** DRILL_NOT_FOUND for another database's. */
  get: rpc<DrillRef, Drill>('databases', 'drills.get', DrillRef),
} as const;
