import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { CreateDatabaseDto } from '../databases/databases.dto.js';
import { CreateLocalDatabaseDto } from './local-databases.dto.js';

function problems(dto: new () => object, body: object): string[] {
  return validateSync(plainToInstance(dto, body)).map((error) => error.property);
}

describe('database names (docs/api/databases.md)', () => {
  it('accepts 1 to 63 lowercase letters, digits, _ and -, a letter first', () => {
    for (const name of ['a', 'orders', 'shop_2-eu', `a${'b'.repeat(62)}`])
      assert.deepEqual(problems(CreateLocalDatabaseDto, { name }), [], name);
  });

  it('refuses every other name, SQL injection included', () => {
    for (const name of [
      '',
      '1abc',
      '_abc',
      '-abc',
      'Orders',
      'a b',
      'a.b',
      'a"b',
      `a${'b'.repeat(63)}`,
      'x"; DROP DATABASE postgres; --',
      "x'; DROP DATABASE postgres; --",
      'ü',
      42,
      null,
    ])
      assert.deepEqual(problems(CreateLocalDatabaseDto, { name }), ['name'], String(name));
  });

  it("lets the daemon see PostgreSQL's own names, which it answers as taken", () => {
    for (const name of ['postgres', 'template1', 'pg_thing'])
      assert.deepEqual(problems(CreateLocalDatabaseDto, { name }), [], name);
  });

  it('keeps reserved and pg_ names out of the cloud, as before', () => {
    for (const name of ['postgres', 'template1', 'pgcloud_replication', 'pg_thing'])
      assert.deepEqual(problems(CreateDatabaseDto, { name }), ['name'], name);
    assert.deepEqual(problems(CreateDatabaseDto, { name: 'orders' }), []);
  });

  it('takes a template of up to 63 characters without NUL', () => {
    assert.deepEqual(problems(CreateLocalDatabaseDto, { name: 'a', template: 'Any Name' }), []);
    for (const template of ['', 'a\0b', 'x'.repeat(64), 7])
      assert.deepEqual(problems(CreateLocalDatabaseDto, { name: 'a', template }), ['template']);
  });
});
