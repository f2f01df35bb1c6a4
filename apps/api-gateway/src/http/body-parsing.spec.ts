import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isUtf8, parseFormBody, parseJsonBody } from './body-parsing.js';

describe('parseJsonBody', () => {
  it('reads a JSON object, and an empty body as an empty object', () => {
    assert.deepEqual(parseJsonBody(' {"name":"x"} '), { body: { name: 'x' } });
    assert.deepEqual(parseJsonBody(' \n'), { body: {} });
    assert.deepEqual(parseJsonBody(''), { body: {} });
  });

  it('refuses broken JSON, a body cut off mid-way among it', () => {
    const whole = '{"target_database": "copy"}';
    for (let length = 1; length < whole.length; length++)
      assert.equal(parseJsonBody(whole.slice(0, length)), 'json', whole.slice(0, length));
    for (const text of ['{', '{"a":', "{'a':1}", 'nul', ']', '\u0000', '{}}'])
      assert.equal(parseJsonBody(text), 'json', JSON.stringify(text));
  });

  it('refuses JSON whose top level is not an object', () => {
    for (const text of ['[]', '[{"name":"x"}]', '"x"', '5', 'true', 'null'])
      assert.equal(parseJsonBody(text), 'object', text);
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
