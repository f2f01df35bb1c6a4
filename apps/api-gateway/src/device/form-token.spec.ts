import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postedFromThisSite } from './form-token.js';

const PUBLIC = 'https://api.pgcloud.test';

describe('postedFromThisSite', () => {
  it('accepts the public origin, the page posting to its own host, and no Origin', () => {
    assert.equal(postedFromThisSite({ origin: PUBLIC, host: 'x' }, PUBLIC), true);
    assert.equal(
      postedFromThisSite({ origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080' }, PUBLIC),
      true,
    );
    assert.equal(postedFromThisSite({ host: 'api.pgcloud.test' }, PUBLIC), true);
  });

  it('accepts Origin: null (no-referrer pages) unless Sec-Fetch-Site says elsewhere', () => {
    const sameOrigin = { origin: 'null', 'sec-fetch-site': 'same-origin' };
    assert.equal(postedFromThisSite(sameOrigin, PUBLIC), true);
    assert.equal(postedFromThisSite({ origin: 'null' }, PUBLIC), true, 'no Fetch Metadata');
    for (const site of ['cross-site', 'same-site', 'none'])
      assert.equal(postedFromThisSite({ origin: 'null', 'sec-fetch-site': site }, PUBLIC), false);
  });

  it('refuses another origin, whatever the host, and a bad Origin', () => {
    for (const origin of ['https://evil.example', 'https://api.pgcloud.test.evil.example', 'x:'])
      assert.equal(postedFromThisSite({ origin, host: 'api.pgcloud.test' }, PUBLIC), false);
    assert.equal(
      postedFromThisSite({ origin: PUBLIC, 'sec-fetch-site': 'cross-site' }, PUBLIC),
      false,
    );
  });
});
