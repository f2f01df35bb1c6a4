import { BlockList, isIP } from 'node:net';

/** Why an address is no place to deliver to, as the attempt's error names it. */
export type AddressKind =
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'multicast'
  | 'unspecified'
  | 'unique-local'
  | 'reserved'
  | 'translated';

/**
 * The ranges no delivery goes to unless WEBHOOK_ALLOW_PRIVATE_TARGETS (docs/api/webhooks.md#targets):
 * the deployment's own networks and the cloud's metadata service (169.254.169.254 is
 * link-local). An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is refused as its IPv4
 * address is: net.BlockList matches it against the IPv4 ranges.
 */
const REFUSED: Record<AddressKind, [string, number, 'ipv4' | 'ipv6'][]> = {
  private: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['100.64.0.0', 10, 'ipv4'],
  ],
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  'link-local': [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  multicast: [
    ['224.0.0.0', 4, 'ipv4'],
    ['ff00::', 8, 'ipv6'],
  ],
  unspecified: [
    ['0.0.0.0', 8, 'ipv4'],
    ['::', 128, 'ipv6'],
  ],
  'unique-local': [['fc00::', 7, 'ipv6']],
  // Not routed on the internet: protocol assignments, benchmarking, documentation, the
  // old class E and the broadcast address. Nothing a webhook receiver would be at.
  reserved: [
    ['192.0.0.0', 24, 'ipv4'],
    ['192.0.2.0', 24, 'ipv4'],
    ['198.18.0.0', 15, 'ipv4'],
    ['198.51.100.0', 24, 'ipv4'],
    ['203.0.113.0', 24, 'ipv4'],
    ['240.0.0.0', 4, 'ipv4'],
    ['2001:db8::', 32, 'ipv6'],
  ],
  // IPv6 addresses that carry an IPv4 one to a translator (NAT64, 6to4), which could be a
  // private address behind it: refused whole, as the IPv4 address inside is not checked.
  translated: [
    ['64:ff9b::', 96, 'ipv6'],
    ['64:ff9b:1::', 48, 'ipv6'],
    ['2002::', 16, 'ipv6'],
  ],
};

const LISTS = Object.entries(REFUSED).map(([kind, ranges]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return { kind: kind as AddressKind, list };
});

/** The refused range an IP address is in, or undefined for an address deliveries may reach. */
export function refusedKind(address: string): AddressKind | undefined {
  const family = isIP(address);
  if (family === 0) throw new Error(`not an IP address: ${address}`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return LISTS.find(({ list }) => list.check(address, type))?.kind;
}

/**
 * Why delivering to `host` at these addresses is refused, or undefined when every one of
 * them may be reached (or the deployment allows private targets).
 */
export function refusal(
  host: string,
  addresses: readonly string[],
  allowPrivate: boolean,
): string | undefined {
  if (allowPrivate) return undefined;
  for (const address of addresses) {
    const kind = refusedKind(address);
    if (kind) {
      const at = address === host ? address : `${host} resolves to ${address}`;
      return `refused: ${at}, a ${kind} address`;
    }
  }
  return undefined;
}
