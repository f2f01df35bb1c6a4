import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quoteIdent, quoteLiteral } from './quote.js';

describe('quoteIdent', () => {
  it('wraps and doubles quotes', () => {
    assert.equal(quoteIdent('app'), '"app"');
    assert.equal(quoteIdent('a"; DROP TABLE x; --'), '"a""; DROP TABLE x; --"');
  });

  it('refuses empty names and NUL', () => {
    assert.throws(() => quoteIdent(''));
    assert.throws(() => quoteIdent('a\0b'));
  });
});

describe('quoteLiteral', () => {
  it('doubles single quotes', () => {
    assert.equal(quoteLiteral("it's"), "'it''s'");
    assert.equal(quoteLiteral(''), "''");
  });

  it('writes backslashes as an E literal, doubled', () => {
    assert.equal(quoteLiteral("a\\'b"), "E'a\\\\''b'");
  });

  it('refuses NUL', () => {
    assert.throws(() => quoteLiteral('a\0b'));
  });
});
