/**
 * @pgcloud/jobs: durable background jobs in a service's own PostgreSQL schema, with leases.
 * Not pg-boss: pg-boss 12 needs Node >= 22.12 (we run 20), and the versions that run on Node 20
 * cannot renew a lease on a long job; so this is a small runner of our own.
 */
export * from './job.types.js';
export * from './job-policy.js';
export * from './jobs-table.js';
export * from './job-queue.js';
export * from './job-runner.js';
export * from './job-ownership.js';
