import type { EntityManager } from 'typeorm';
import { configuredSchema, jobsTable } from './jobs-table.js';
import type { Job } from './job.types.js';
import { queryRows } from '@pgcloud/postgres';

/**
 * The fence for a handler's final write. Inside the caller's transaction, locks the job's
 * row when `job`'s attempt still holds it with a lease that has not lapsed, and answers
 * whether it does. Write the outcome in that same transaction, and only on true: until it
 * commits no other worker can claim the job (the claim skips locked rows), and an attempt
 * that lost the job (another worker's claim counted a new attempt) writes nothing.
 */
export async function holdJob(
  manager: EntityManager,
  job: Pick<Job, 'id' | 'attempt'>,
  schema: string = configuredSchema(manager, 'holdJob'),
): Promise<boolean> {
  // attempts grows with every claim, so it names this attempt; clock_timestamp(), not the
  // transaction's start, is the moment the lease must still cover.
  const rows = await queryRows<{ id: string }>(
    manager,
    `SELECT id FROM ${jobsTable(schema)}
      WHERE id = $1 AND attempts = $2 AND status = 'running' AND lease_until > clock_timestamp()
      FOR UPDATE`,
    [job.id, job.attempt],
  );
  return rows.length === 1;
}
