import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quoteIdent } from './quote.js';

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
