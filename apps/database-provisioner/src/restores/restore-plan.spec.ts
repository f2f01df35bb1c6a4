import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RestorePlan } from '@pgcloud/contracts';
import { PermanentJobError } from '@pgcloud/jobs';
import { NO_PLAN, assertLinksAt, recoveryOf } from './restore-plan.js';

const PLAN: RestorePlan = {
  base_backup_id: 'bkp_k3v9x0q2m8t4b7w1c5zd',
  base_backup_url: 'http://127.0.0.1:7480/bucket/base.tar.zst',
  base_backup_sha256: 'ab'.repeat(32),
  base_backup_size_bytes: 1024,
  wal_segments: [
    {
      name: '000000010000000000000003',
      urls: ['http://127.0.0.1:7480/w'],
      partial: false,
      size_bytes: 16,
    },
  ],
};

const refusedAsNoPlan = (err: unknown) =>
  err instanceof PermanentJobError && err.kind === NO_PLAN && /^no plan: /.test(err.message);

describe('recoveryOf: a PITR plan from pitr-worker, checked again', () => {
  it('answers the segments and the target of a plan within the grammars', () => {
    const { recovery } = recoveryOf({ ...PLAN, target_time: '2026-11-24T07:00:00.123456Z' });
    assert.deepEqual(recovery?.target, { time: '2026-11-24T07:00:00.123456Z' });
    assert.equal(recovery?.segments[0]?.name, '000000010000000000000003');
    assert.deepEqual(recoveryOf({ ...PLAN, wal_segments: undefined }), {});
  });

  it('refuses, for good, a target holding quotes, $(...), newlines or anything else', () => {
    for (const target of [
      { target_time: '2026-11-24T07:00:00Z" -c "archive_command=id' },
      { target_time: "2026-11-24T07:00:00Z'" },
      { target_lsn: '0/3000148$(touch /tmp/x)' },
      { target_lsn: '0/3000148\n' },
      { target_restore_point: 'x`id`' },
    ])
      assert.throws(
        () => recoveryOf({ ...PLAN, ...target }),
        refusedAsNoPlan,
        JSON.stringify(target),
      );
  });

  it('refuses segment names that are not WAL segments', () => {
    for (const name of ['../../postgresql.conf', '000000010000000000000003.partial', ''])
      assert.throws(
        () =>
          recoveryOf({
            ...PLAN,
            target_lsn: '0/3000148',
            wal_segments: [
              { name, urls: ['http://127.0.0.1:7480/w'], partial: false, size_bytes: 1 },
            ],
          }),
        refusedAsNoPlan,
        name,
      );
  });
});

describe('assertLinksAt: a plan downloads only from the object store', () => {
  const STORE = 'http://127.0.0.1:7480';

  it("passes a plan whose every link is to the store's origin", () => {
    assertLinksAt(PLAN, STORE);
    assertLinksAt({ ...PLAN, wal_segments: undefined }, STORE);
  });

  it('refuses, for good, a link to another host, port or scheme, or no URL at all', () => {
    for (const link of [
      'http://169.254.169.254/latest/meta-data/',
      'http://127.0.0.1:5432/x',
      'https://127.0.0.1:7480/bucket/base.tar.zst',
      'file:///etc/passwd',
      'http://127.0.0.1:7480@evil.example/x',
      'not a url',
    ]) {
      assert.throws(
        () => assertLinksAt({ ...PLAN, base_backup_url: link }, STORE),
        refusedAsNoPlan,
        link,
      );
      const segment = {
        name: '000000010000000000000003',
        urls: [link],
        partial: false,
        size_bytes: 1,
      };
      assert.throws(
        () => assertLinksAt({ ...PLAN, wal_segments: [segment] }, STORE),
        refusedAsNoPlan,
        link,
      );
    }
  });
});
