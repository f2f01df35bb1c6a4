import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientRequest } from './client-ip.js';
import { bucketAddress, clientIp } from './client-ip.js';

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

describe('bucketAddress', () => {
  it('names an IPv4 client by its address, a mapped one too', () => {
    assert.equal(bucketAddress('203.0.113.7'), '203.0.113.7');
    assert.equal(bucketAddress('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(bucketAddress('unknown'), 'unknown');
  });

  it('puts two IPv6 addresses of one /64 in one bucket, and of two /64s in two', () => {
    const one = bucketAddress('2001:db8:aa:1::1');
    assert.equal(one, '2001:db8:aa:1::/64');
    for (const sibling of [
      '2001:db8:aa:1:ffff:ffff:ffff:ffff',
      '2001:0db8:00aa:0001::2',
      '2001:DB8:AA:1:0:0:0:3',
      '2001:db8:aa:1::192.0.2.1',
      '2001:db8:aa:1::9%eth0',
    ])
      assert.equal(bucketAddress(sibling), one, sibling);
    assert.equal(bucketAddress('2001:db8:aa:2::1'), '2001:db8:aa:2::/64');
    assert.equal(bucketAddress('::1'), '0:0:0:0::/64');
    assert.equal(bucketAddress('2001:db8::'), '2001:db8:0:0::/64');
    assert.equal(bucketAddress('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  });
});
