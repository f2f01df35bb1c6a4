import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccessToken } from './access-token.js';

describe('AccessToken', () => {
  const token = new AccessToken('pgcd_secret-token');

  it('accepts exactly Bearer and the token, the scheme in any case', () => {
    assert.equal(token.accepts('Bearer pgcd_secret-token'), true);
    assert.equal(token.accepts('bearer pgcd_secret-token'), true);
  });

  it('refuses a missing, malformed, shorter, longer or different token', () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'pgcd_secret-token',
      'Basic pgcd_secret-token',
      'Bearer pgcd_secret-toke',
      'Bearer pgcd_secret-tokenn',
      'Bearer pgcd_secret-token extra',
      'Bearer PGCD_SECRET-TOKEN',
    ])
      assert.equal(token.accepts(header), false, String(header));
  });
});
