import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackAddress } from './loopback.js';

describe('isLoopbackAddress', () => {
  it('knows loopback names and addresses from the rest', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
      assert.equal(isLoopbackAddress(host), true, host);
    for (const host of [
      '0.0.0.0',
      '::',
      '*',
      '',
      '10.0.0.1',
      '128.0.0.1',
      '127.example.com',
      'localhost.example.com',
      'pgcloud.example.com',
      '::ffff:10.0.0.1',
    ])
      assert.equal(isLoopbackAddress(host), false, host);
  });
});
