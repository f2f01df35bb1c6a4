import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { enqueue, newJobId } from './job-queue.js';

describe('newJobId', () => {
  it('makes job_ ids of 20 random characters', () => {
    const id = newJobId();
    assert.match(id, /^job_[0-9a-z]{20}$/);
    assert.notEqual(newJobId(), id);
  });
});

describe('enqueue', () => {
  // Never initialised: both refusals happen before any SQL is sent.
  const withoutSchema = new DataSource({ type: 'postgres' });

  it('needs a schema, given or set on the DataSource', async () => {
    await assert.rejects(
      enqueue(withoutSchema, { type: 't', key: 'k', payload: {} }),
      /enqueue needs a schema/,
    );
    await assert.rejects(
      enqueue(withoutSchema.manager, { type: 't', key: 'k', payload: {} }),
      /enqueue needs a schema/,
    );
  });

  it('refuses a maxAttempts below one', async () => {
    await assert.rejects(
      enqueue(withoutSchema, { type: 't', key: 'k', payload: {}, maxAttempts: 0, schema: 's' }),
      RangeError,
    );
  });
});
