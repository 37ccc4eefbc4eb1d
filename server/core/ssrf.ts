import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** One address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (A and AAAA), like `dns.lookup(host, { all: true })`. */
export type LookupAll = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: LookupAll = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export type Rule = [network: string, prefix: number, family: 'ipv4' | 'ipv6'];

/**
 * Address ranges a webhook may not reach, most specific first so the message names the reason
 * that matters (a metadata address is also link-local). BlockList matches IPv4-mapped IPv6
 * addresses (`::ffff:10.0.0.1`) against the IPv4 rules, so they cannot sneak past.
 */
export const CATEGORIES: [reason: string, rules: Rule[]][] = [
  [
    'a cloud metadata address',
    [
      ['169.254.169.254', 32, 'ipv4'],
      ['fd00:ec2::254', 128, 'ipv6'],
    ],
  ],
  [
    'a loopback address',
    [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
  ],
  [
    'an unspecified address',
    [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  ],
  [
    'a private address',
    [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
      ['fec0::', 10, 'ipv6'],
    ],
  ],
  [
    'a link-local address',
    [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  ],
  // Alibaba's metadata service (100.100.100.200) lives here too.
  ['a carrier-grade NAT address', [['100.64.0.0', 10, 'ipv4']]],
  [
    'a multicast address',
    [
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ],
  ],
  [
    'a reserved address',
    [
      ['192.0.0.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'],
    ],
  ],
];

const BLOCKS: [string, BlockList][] = CATEGORIES.map(([reason, rules]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of rules) list.addSubnet(network, prefix, family);
  return [reason, list];
});

const v4 = (b: number[]) => b.join('.');

/**
 * IPv6 ranges that carry an IPv4 address a packet ends up at: NAT64 (64:ff9b::/96, RFC 6052,
 * and the local-use 64:ff9b:1::/48 of RFC 8215 with the /48 layout, which skips the u-octet),
 * 6to4 (2002::/16) and Teredo (2001::/32: the server at bits 32-63, the client inverted in the
 * last 32 bits). Each gets the IPv4 rules of the address it embeds.
 */
const TRANSLATIONS: [network: string, prefix: number, embedded: (b: number[]) => string[]][] = [
  ['64:ff9b::', 96, (b) => [v4(b.slice(12, 16))]],
  ['64:ff9b:1::', 48, (b) => [v4([b[6]!, b[7]!, b[9]!, b[10]!])]],
  ['2002::', 16, (b) => [v4(b.slice(2, 6))]],
  ['2001::', 32, (b) => [v4(b.slice(4, 8)), v4(b.slice(12, 16).map((x) => x ^ 0xff))]],
];

/** The IPv4 addresses an IPv6 address of a translation range stands for; [] for any other. */
export function embeddedIPv4(address: string): string[] {
  if (isIP(address) !== 6) return [];
  const parsed = ipaddr.IPv6.parse(address);
  for (const [network, prefix, embedded] of TRANSLATIONS) {
    if (parsed.match(ipaddr.IPv6.parse(network), prefix)) return embedded(parsed.toByteArray());
  }
  return [];
}

/** Why an address may not receive webhooks ("a private address"), or null for a public address. */
export function blockedReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [reason, list] of BLOCKS) if (list.check(address, type)) return reason;
  for (const inner of embeddedIPv4(address)) {
    const reason = blockedReason(inner);
    if (reason) return `${reason} (${inner}, embedded in this IPv6 address)`;
  }
  return null;
}

/** A delivery the SSRF rule refused; never worth retrying, since the same rule will refuse it again. */
export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

/**
 * The addresses to connect to for `hostname`: resolved now, at delivery time, and checked. The
 * caller must connect to exactly these (not look the name up again), or a DNS answer
 * that changes between the check and the connection (rebinding) would get through. When any
 * address of the name is refused the whole delivery is, so a name cannot mix a public address
 * with an internal one and hope for the latter.
 */
export async function resolveTarget(
  hostname: string,
  opts: { lookup: LookupAll; allowPrivate: boolean },
): Promise<ResolvedAddress[]> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const literal = isIP(bare);
  const addresses: ResolvedAddress[] =
    literal === 0 ? await opts.lookup(bare) : [{ address: bare, family: literal === 6 ? 6 : 4 }];
  if (addresses.length === 0) throw new Error(`${bare} did not resolve to any address`);
  if (opts.allowPrivate) return addresses;
  for (const a of addresses) {
    const reason = blockedReason(a.address);
    if (reason) {
      const via = a.address === bare ? '' : ` (${bare} resolves to it)`;
      throw new RefusedAddressError(
        `refused: ${a.address} is ${reason}${via}; set SLIPWAY_WEBHOOK_ALLOW_PRIVATE=true to allow`,
      );
    }
  }
  return addresses;
}
