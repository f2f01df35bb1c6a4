import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackHost } from './host-check.js';

describe('isLoopbackHost', () => {
  it('accepts localhost, 127.0.0.1 and [::1], with or without a port', () => {
    for (const host of [
      'localhost',
      'LocalHost:5480',
      '127.0.0.1',
      '127.0.0.1:5480',
      '[::1]',
      '[::1]:5480',
    ])
      assert.equal(isLoopbackHost(host), true, host);
  });

  it('refuses every other name, and malformed or missing Hosts', () => {
    for (const host of [
      undefined,
      '',
      'evil.example',
      'evil.example:5480',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      '127.0.0.2',
      '0.0.0.0',
      '::1',
      '[::1',
      'localhost:',
      'localhost:99999',
      'localhost:5480:1',
      'localhost@evil.example',
      '10.0.0.1:5480',
    ])
      assert.equal(isLoopbackHost(host), false, String(host));
  });
});
