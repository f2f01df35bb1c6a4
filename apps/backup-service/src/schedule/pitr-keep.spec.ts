import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExpiredBackup } from './pitr-keep.js';
import { neededByPitr } from './pitr-keep.js';

const KEEP_FROM = '2026-11-20T10:00:00.000000Z';
const FROM_MS = Date.parse(KEEP_FROM);

function completed(databaseId: string, completedAtMs: number): ExpiredBackup {
  return {
    id: `bkp_${completedAtMs}`,
    databaseId,
    status: 'completed',
    createdAt: new Date(completedAtMs - 60_000),
    completedAt: new Date(completedAtMs),
  };
}

describe('neededByPitr', () => {
  const keepFrom = { db_pitr: KEEP_FROM };

  it('keeps a backup completed at or after keep_from, and lets one completed before it go', () => {
    assert.equal(neededByPitr(completed('db_pitr', FROM_MS), keepFrom), true);
    assert.equal(neededByPitr(completed('db_pitr', FROM_MS + 1), keepFrom), true);
    assert.equal(neededByPitr(completed('db_pitr', FROM_MS - 1), keepFrom), false);
  });

  it('compares to the microsecond', () => {
    const justAfter = { db_pitr: '2026-11-20T10:00:00.000001Z' };
    assert.equal(neededByPitr(completed('db_pitr', FROM_MS), justAfter), false);
    const justBefore = { db_pitr: '2026-11-20T09:59:59.999999Z' };
    assert.equal(neededByPitr(completed('db_pitr', FROM_MS), justBefore), true);
    const offset = { db_pitr: '2026-11-20T12:00:00+02:00' };
    assert.equal(neededByPitr(completed('db_pitr', FROM_MS), offset), true);
  });

  it('judges a backup that did not complete by when it was created', () => {
    const failed = (createdAtMs: number): ExpiredBackup => ({
      id: 'bkp_failed',
      databaseId: 'db_pitr',
      status: 'failed',
      createdAt: new Date(createdAtMs),
      completedAt: null,
    });
    assert.equal(neededByPitr(failed(FROM_MS + 1000), keepFrom), true);
    assert.equal(neededByPitr(failed(FROM_MS), keepFrom), true);
    assert.equal(neededByPitr(failed(FROM_MS - 1000), keepFrom), false);
  });

  it('lets every backup of a database without PITR go', () => {
    assert.equal(neededByPitr(completed('db_plain', FROM_MS + 1000), keepFrom), false);
    assert.equal(neededByPitr(completed('db_plain', FROM_MS + 1000), {}), false);
    assert.equal(neededByPitr(completed('toString', FROM_MS + 1000), {}), false);
  });

  it('keeps what it cannot judge: an unreadable keep_from, a completed backup without its time', () => {
    const garbled = { db_pitr: 'yesterday' };
    assert.equal(neededByPitr(completed('db_pitr', FROM_MS - 86_400_000), garbled), true);
    const untimed: ExpiredBackup = { ...completed('db_pitr', FROM_MS - 1000), completedAt: null };
    assert.equal(neededByPitr(untimed, keepFrom), true);
  });
});
