import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { archiveReach } from './archive.entity.js';

const at = (second: number): Date => new Date(Date.UTC(2026, 10, 28, 10, 0, second));
const SEGMENT = 16n * 1024n * 1024n;

describe('archiveReach', () => {
  const archive = {
    windowTo: at(50),
    archivedLsn: 9n * SEGMENT + 500n,
    archiveState: 'healthy' as const,
    intactUntil: null,
    intactLsn: null,
  };

  it('reaches the window and the archived position of a whole archive', () => {
    assert.deepEqual(archiveReach(archive), { to: at(50), lsn: 9n * SEGMENT + 500n });
  });

  it('stops a broken archive before its first bad segment', () => {
    const broken = {
      ...archive,
      archiveState: 'broken' as const,
      intactUntil: at(20),
      intactLsn: 5n * SEGMENT,
    };
    assert.deepEqual(archiveReach(broken), { to: at(20), lsn: 5n * SEGMENT - 1n });
  });

  it('reaches no moment when nothing before the bad segment is whole', () => {
    const broken = {
      ...archive,
      archiveState: 'broken' as const,
      intactUntil: null,
      intactLsn: 2n * SEGMENT,
    };
    assert.deepEqual(archiveReach(broken), { to: null, lsn: 2n * SEGMENT - 1n });
  });

  it('never reaches further than the window already does', () => {
    const broken = {
      ...archive,
      archiveState: 'broken' as const,
      intactUntil: at(55),
      intactLsn: 12n * SEGMENT,
    };
    assert.deepEqual(archiveReach(broken), { to: at(50), lsn: 9n * SEGMENT + 500n });
  });
});
