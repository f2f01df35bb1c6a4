import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { CreateRestorePointDto, PitrRestoreDto } from './pitr.dto.js';

function invalid(dto: new () => object, body: object): string[] {
  return validateSync(plainToInstance(dto, body)).map((error) => error.property);
}

describe('PITR restore targets', () => {
  it('takes exactly one of target_time, target_lsn and target_restore_point', () => {
    for (const body of [
      { target_time: 'latest' },
      { target_time: '2026-11-22T10:00:00.123456Z', target_database: 'copy' },
      { target_lsn: '0/3000148' },
      { target_lsn: 'ff/ABCDEF01' },
      { target_restore_point: 'before-migration' },
    ])
      assert.deepEqual(invalid(PitrRestoreDto, body), [], JSON.stringify(body));
    for (const body of [
      {},
      { target_database: 'copy' },
      { target_time: 'latest', target_lsn: '0/1' },
      { target_lsn: '0/1', target_restore_point: 'a' },
      { target_time: 'latest', target_lsn: '0/1', target_restore_point: 'a' },
    ])
      assert.deepEqual(invalid(PitrRestoreDto, body), ['target_time'], JSON.stringify(body));
  });

  it('checks the form of each target', () => {
    assert.deepEqual(invalid(PitrRestoreDto, { target_time: 'yesterday' }), ['target_time']);
    for (const target_lsn of ['0-1', 'G/0', '123456789/0', '/1', 7])
      assert.deepEqual(invalid(PitrRestoreDto, { target_lsn }), ['target_lsn'], String(target_lsn));
    for (const target_restore_point of ['Bad Name', '1st', ''])
      assert.deepEqual(
        invalid(PitrRestoreDto, { target_restore_point }),
        ['target_restore_point'],
        target_restore_point,
      );
  });

  it('names restore points as databases are named', () => {
    assert.deepEqual(invalid(CreateRestorePointDto, { name: 'before-migration_2' }), []);
    for (const name of ['Bad Name', 'a'.repeat(64), '', undefined])
      assert.deepEqual(invalid(CreateRestorePointDto, { name }), ['name'], String(name));
  });
});
