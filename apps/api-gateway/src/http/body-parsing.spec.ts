import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UNREADABLE, isUtf8, parseFormBody, parseJsonBody } from './body-parsing.js';

describe('parseJsonBody', () => {
  it('reads a JSON object or array, and an empty body as an empty object', () => {
    assert.deepEqual(parseJsonBody(' {"name":"x"} '), { name: 'x' });
    assert.deepEqual(parseJsonBody('[1]'), [1]);
    assert.deepEqual(parseJsonBody(' \n'), {});
  });

  it('refuses anything else: broken JSON, bare values, stray characters', () => {
    for (const text of ['{', '{"a":', "{'a':1}", '"x"', '1', 'null', 'nul', ']', '\u0000', '{}}'])
      assert.equal(parseJsonBody(text), UNREADABLE, JSON.stringify(text));
  });
});

describe('isUtf8', () => {
  it('takes no charset or UTF-8, however written, and nothing else', () => {
    for (const type of [undefined, 'application/json', 'application/json; charset=UTF-8'])
      assert.equal(isUtf8(type), true, type);
    assert.equal(isUtf8('application/json;charset="utf8"'), true);
    for (const type of ['application/json; charset=latin1', 'application/json; charset=utf-16'])
      assert.equal(isUtf8(type), false, type);
  });
});

describe('parseFormBody', () => {
  it('reads fields, decoding + and %-escapes, and keeps every value of a repeated one', () => {
    assert.deepEqual(
      { ...parseFormBody('user_code=AB+CD&login=ann%40x&x=1&x=2') },
      {
        user_code: 'AB CD',
        login: 'ann@x',
        x: ['1', '2'],
      },
    );
  });
});
