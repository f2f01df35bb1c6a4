import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refusal, refusedKind } from './address-check.js';

/** One address of each refused range, at its edges where a range has them. */
const REFUSED = {
  private: [
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.1.10',
    '100.64.0.1',
    '100.127.255.254',
  ],
  loopback: ['127.0.0.1', '127.10.20.30', '::1'],
  'link-local': ['169.254.169.254', '169.254.0.1', 'fe80::1', 'febf::1'],
  multicast: ['224.0.0.1', '239.255.255.250', 'ff02::1'],
  unspecified: ['0.0.0.0', '0.1.2.3', '::'],
  'unique-local': ['fc00::1', 'fd12:3456:789a::1'],
  reserved: [
    '192.0.0.8',
    '192.0.2.1',
    '198.18.0.1',
    '198.19.255.254',
    '198.51.100.7',
    '203.0.113.9',
    '240.0.0.1',
    '255.255.255.255',
    '2001:db8::1',
  ],
  translated: ['64:ff9b::a00:1', '64:ff9b:1::1', '2002:a00:1::1'],
};

/** Public addresses, some right beside a refused range. */
const PUBLIC = [
  '93.184.215.14',
  '1.1.1.1',
  '9.255.255.255',
  '11.0.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.169.0.1',
  '100.63.255.255',
  '100.128.0.0',
  '169.253.255.255',
  '223.255.255.255',
  '192.0.1.1',
  '198.17.255.255',
  '198.20.0.0',
  '2606:4700:4700::1111',
  '2001:db9::1',
];

describe('target addresses', () => {
  for (const [kind, addresses] of Object.entries(REFUSED))
    it(`refuses ${kind} addresses`, () => {
      for (const address of addresses) assert.equal(refusedKind(address), kind, address);
    });

  it('refuses an IPv4-mapped IPv6 address as its IPv4 address', () => {
    assert.equal(refusedKind('::ffff:127.0.0.1'), 'loopback');
    assert.equal(refusedKind('::ffff:10.1.2.3'), 'private');
    assert.equal(refusedKind('::ffff:a9fe:a9fe'), 'link-local'); // 169.254.169.254
    assert.equal(refusedKind('::ffff:93.184.215.14'), undefined);
  });

  it('allows public addresses', () => {
    for (const address of PUBLIC) assert.equal(refusedKind(address), undefined, address);
  });

  it('refuses a host when any address it resolves to is refused, naming it', () => {
    assert.equal(
      refusal('hooks.example.com', ['93.184.215.14', '10.0.0.7'], false),
      'refused: hooks.example.com resolves to 10.0.0.7, a private address',
    );
    assert.equal(
      refusal('169.254.169.254', ['169.254.169.254'], false),
      'refused: 169.254.169.254, a link-local address',
    );
    assert.equal(refusal('hooks.example.com', ['93.184.215.14', '2606:4700::1'], false), undefined);
  });

  it('allows every address with WEBHOOK_ALLOW_PRIVATE_TARGETS', () => {
    for (const address of Object.values(REFUSED).flat())
      assert.equal(refusal('localhost', [address], true), undefined, address);
  });
});
