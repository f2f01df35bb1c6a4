import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientRequest } from './client-ip.js';
import { clientIp } from './client-ip.js';

function request(forwardedFor?: string | string[]): ClientRequest {
  return {
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    socket: { remoteAddress: '10.0.0.9' },
  } as unknown as ClientRequest;
}

describe('clientIp', () => {
  it('is the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    assert.equal(clientIp(request('203.0.113.7'), 0), '10.0.0.9');
  });

  it('is the entry the outermost trusted proxy wrote, counted from the right', () => {
    assert.equal(clientIp(request('1.1.1.1, 203.0.113.7'), 1), '203.0.113.7');
    assert.equal(clientIp(request('1.1.1.1, 203.0.113.7, 10.0.0.2'), 2), '203.0.113.7');
    assert.equal(clientIp(request(['1.1.1.1', '203.0.113.7']), 1), '203.0.113.7');
  });

  it('never lets the client choose its address by adding entries on the left', () => {
    for (const spoofed of ['6.6.6.6, 203.0.113.7', '7.7.7.7,8.8.8.8, 203.0.113.7'])
      assert.equal(clientIp(request(spoofed), 1), '203.0.113.7', spoofed);
  });

  it('counts an entry that is not an IP address as none', () => {
    for (const header of ['203.0.113.7:5000', 'unknown', '1.1.1.1, not-an-address'])
      assert.equal(clientIp(request(header), 1), '10.0.0.9', header);
    assert.equal(clientIp(request('1.1.1.1, 2001:db8::1'), 1), '2001:db8::1');
  });

  it('falls back to the leftmost entry or the socket when the header is short or empty', () => {
    assert.equal(clientIp(request('203.0.113.7'), 3), '203.0.113.7');
    assert.equal(clientIp(request(' , '), 1), '10.0.0.9');
    assert.equal(clientIp(request(), 1), '10.0.0.9');
  });
});
