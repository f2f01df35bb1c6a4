import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dropJobsTableSql, jobsTableSql } from './jobs-table.js';

describe('jobsTableSql', () => {
  it('quotes the schema', () => {
    const sql = jobsTableSql('data"bases');
    assert.match(sql, /CREATE TABLE "data""bases"\.jobs/);
    assert.equal(dropJobsTableSql('databases'), 'DROP TABLE "databases".jobs');
  });

  it('allows one unfinished job per type and key', () => {
    assert.match(
      jobsTableSql('databases'),
      /CREATE UNIQUE INDEX \S+ ON "databases"\.jobs \(type, key\)\s+WHERE status IN \('queued', 'running'\)/,
    );
  });
});
