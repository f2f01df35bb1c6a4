import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drillInput, restoreInput } from './restore-input.js';

const VALID = {
  restoreId: 'rstr_1',
  archive: { url: 'https://s3/base?sig=secret-sig', sha256: 'ab'.repeat(32) },
  archivedDatabaseName: 'app_a',
  databaseName: 'app_b',
  password: 'secret-pw',
  replicationPassword: 'secret-repl',
};

describe('restore.json', () => {
  it('reads a restore to the end of the backup, and one to a time, a position or a restore point', () => {
    assert.deepEqual(restoreInput(VALID), VALID);
    const segments = [
      {
        name: '000000010000000000000003',
        urls: ['https://s3/w.1', 'https://s3/w.2'],
        partial: true,
        sizeBytes: 8,
      },
      // A completed segment stored compressed.
      {
        name: '000000010000000000000004',
        urls: ['https://s3/w.zst'],
        partial: false,
        sizeBytes: 16777216,
        compression: 'zstd',
      },
    ];
    for (const target of [
      { time: '2026-11-24T07:00:00.000000Z' },
      { lsn: '0/3000148' },
      { restorePoint: 'before-migration' },
    ]) {
      const recovery = { segments, target };
      assert.deepEqual(restoreInput({ ...VALID, recovery }), { ...VALID, recovery });
    }
  });

  it('names the field that is wrong and never quotes a value', () => {
    const cases: [unknown, RegExp][] = [
      [{ ...VALID, password: '' }, /^password is missing$/],
      [{ ...VALID, archive: { ...VALID.archive, sha256: 'secret-sig' } }, /archive.sha256/],
      [{ ...VALID, archive: 'secret-sig' }, /^archive is not an object$/],
      [{ ...VALID, recovery: { segments: [], target: { time: 'secret-pw' } } }, /target.time/],
      [
        {
          ...VALID,
          recovery: {
            segments: [
              { name: 'x', urls: ['u'], partial: false, sizeBytes: 1, compression: 'secret' },
            ],
            target: { lsn: '0/1' },
          },
        },
        /recovery.segments\[0\].compression is not zstd/,
      ],
      [{ ...VALID, recovery: { segments: [], target: { lsn: 'secret-pw' } } }, /target.lsn/],
      [{ ...VALID, recovery: { segments: [], target: { other: 'secret' } } }, /target.other/],
      [
        { ...VALID, recovery: { segments: [], target: { lsn: '0/1', time: 'secret' } } },
        /more or less than one/,
      ],
      [
        {
          ...VALID,
          recovery: {
            segments: [{ name: 'x', urls: ['secret-sig'] }],
            target: { time: '2026-01-01T00:00:00Z' },
          },
        },
        /recovery.segments\[0\].sizeBytes/,
      ],
      [
        {
          ...VALID,
          recovery: {
            segments: [{ name: 'x', urls: [], partial: false, sizeBytes: 1 }],
            target: { time: '2026-01-01T00:00:00Z' },
          },
        },
        /recovery.segments\[0\].urls/,
      ],
    ];
    for (const [value, message] of cases) {
      assert.throws(
        () => restoreInput(value),
        (err: Error) => message.test(err.message) && !/secret/.test(err.message),
      );
    }
  });

  it("reads a drill's input, and each segment's ETags when given", () => {
    const recovery = {
      target: { time: '2026-11-28T10:00:00.000000Z' },
      segments: [
        {
          name: '000000010000000000000003',
          urls: ['https://s3/a', 'https://s3/b'],
          partial: false,
          sizeBytes: 16777216,
          etags: ['"abc"', null],
        },
      ],
    };
    const drill = { drillId: 'drl_1', archive: VALID.archive, archivedDatabaseName: 'app_a' };
    assert.deepEqual(drillInput(drill), drill);
    assert.deepEqual(drillInput({ ...drill, recovery }).recovery?.segments[0]?.etags, [
      '"abc"',
      null,
    ]);
    const oneShort = { ...recovery, segments: [{ ...recovery.segments[0], etags: ['"abc"'] }] };
    assert.throws(() => drillInput({ ...drill, recovery: oneShort }), /etags is not one ETag/);
    assert.throws(() => drillInput({ ...drill, drillId: '' }), /drillId is missing/);
  });
});
