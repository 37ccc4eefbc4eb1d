import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { CATEGORIES, type LookupAll, type Rule } from '../../core/ssrf.ts';

/** One address range, as nftables and BlockList both take it. */
export interface Range {
  address: string;
  prefix: number;
  family: 4 | 6;
}

/**
 * What tenant code may reach. Everything public is; what the webhook SSRF guard refuses is not,
 * nor the documentation ranges (never public; this machine's registry answers from one, which is
 * what the allow list is for), nor the host's own addresses and gateways: a user-mode network
 * reaches them as the host would.
 */
export interface NetworkPolicy {
  denied: Range[];
  /** The operator's exceptions (SLIPWAY_SANDBOX_ALLOW), checked before `denied`. */
  allowed: Range[];
  /** Resolvers from /etc/resolv.conf: port 53 on them stays open so that DNS works. */
  dns: string[];
}

const DOCUMENTATION: Rule[] = [
  ['192.0.2.0', 24, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['2001:db8::', 32, 'ipv6'],
];
/**
 * IPv4-mapped, NAT64, 6to4 and Teredo IPv6 addresses would reach IPv4 ranges by another name.
 * The webhook guard checks the IPv4 address they embed (ssrf.ts); nftables rules match ranges,
 * so tenant code gets none of them (6to4 and Teredo are all but retired on the public internet).
 */
const TRANSLATED: Rule[] = [
  ['::ffff:0:0', 96, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['2001::', 32, 'ipv6'],
];

const toRange = ([address, prefix, family]: Rule): Range => ({
  address,
  prefix,
  family: family === 'ipv4' ? 4 : 6,
});

/** The host's own interface addresses and default gateways (from /proc/net/route). */
export function hostAddresses(): Range[] {
  const out: Range[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      const family = a.family === 'IPv6' ? 6 : 4;
      out.push({ address: a.address.split('%')[0]!, prefix: family === 4 ? 32 : 128, family });
    }
  }
  try {
    for (const line of readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)) {
      const gateway = line.split('\t')[2];
      if (!gateway || /^0+$/.test(gateway)) continue;
      // Little-endian hex: 0102000A is 10.0.2.1.
      const bytes = gateway
        .match(/../g)!
        .map((h) => parseInt(h, 16))
        .reverse();
      out.push({ address: bytes.join('.'), prefix: 32, family: 4 });
    }
  } catch {
    // Not Linux: the sandbox does not run there anyway.
  }
  try {
    for (const line of readFileSync('/proc/net/ipv6_route', 'utf8').split('\n')) {
      const gateway = line.trim().split(/\s+/)[4];
      if (!gateway || /^0+$/.test(gateway)) continue;
      out.push({ address: gateway.match(/.{4}/g)!.join(':'), prefix: 128, family: 6 });
    }
  } catch {
    // As above.
  }
  return out;
}

/** Name servers of /etc/resolv.conf (or the text given). */
export function resolvers(resolvConf?: string): string[] {
  let text = resolvConf;
  if (text === undefined) {
    try {
      text = readFileSync('/etc/resolv.conf', 'utf8');
    } catch {
      return [];
    }
  }
  return [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1]!).filter((a) => isIP(a) !== 0);
}

/** `10.1.2.3`, `10.0.0.0/8`, `fd00::/8`: a Range, or null when it is not an address or range. */
export function parseRange(entry: string): Range | null {
  const [address = '', bits] = entry.split('/');
  const family = isIP(address);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!/^\d+$/.test(bits ?? '0') || prefix > max) return null;
  return { address, prefix, family: family === 4 ? 4 : 6 };
}

/**
 * The policy for `allow` (SLIPWAY_SANDBOX_ALLOW: addresses, ranges and host names; names are
 * looked up now, so call this again to follow their DNS).
 */
export async function buildNetworkPolicy(
  allow: readonly string[],
  opts: { lookup: LookupAll; host?: Range[]; dns?: string[] },
): Promise<NetworkPolicy> {
  const allowed: Range[] = [];
  for (const entry of allow) {
    const range = parseRange(entry);
    if (range) {
      allowed.push(range);
      continue;
    }
    const found = await opts.lookup(entry).catch(() => []);
    for (const a of found)
      allowed.push({ address: a.address, prefix: a.family === 4 ? 32 : 128, family: a.family });
  }
  const denied = [...CATEGORIES.flatMap(([, rules]) => rules), ...DOCUMENTATION, ...TRANSLATED].map(toRange);
  denied.push(...(opts.host ?? hostAddresses()));
  return { denied, allowed, dns: opts.dns ?? resolvers() };
}

function blockList(ranges: Range[]): BlockList {
  const list = new BlockList();
  for (const r of ranges) list.addSubnet(r.address, r.prefix, r.family === 4 ? 'ipv4' : 'ipv6');
  return list;
}

/**
 * Whether tenant code may connect to `address` under `policy`. An address is checked against
 * the ranges of its own family only: BlockList also matches an IPv4 address against IPv6 rules
 * in its mapped form (::ffff:a.b.c.d), which would refuse every IPv4 address here.
 */
export function isReachable(policy: NetworkPolicy, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const mine = (ranges: Range[]) => blockList(ranges.filter((r) => r.family === family));
  if (mine(policy.allowed).check(address, type)) return true;
  return !mine(policy.denied).check(address, type);
}

const cidr = (r: Range) => `${r.address}/${r.prefix}`;

/**
 * The nftables rules loaded into a sandbox's network namespace before tenant code starts, by a
 * process the tenant cannot reach (see spawn.ts). Refused connections are answered with a reset
 * (TCP) or an ICMP error, as a closed port would be: an open port and a closed one look the same.
 * One rule per range: nftables refuses overlapping ranges in one set.
 */
export function nftRuleset(policy: NetworkPolicy): string {
  const key = (r: Range | string) => ((typeof r === 'string' ? isIP(r) : r.family) === 6 ? 'ip6' : 'ip');
  const lines = [
    'table inet slipway {',
    '  chain refuse {',
    '    meta l4proto tcp reject with tcp reset',
    '    reject',
    '  }',
    '  chain output {',
    '    type filter hook output priority 0; policy accept;',
    '    oifname "lo" accept',
  ];
  for (const server of policy.dns) {
    lines.push(`    ${key(server)} daddr ${server} udp dport 53 accept`);
    lines.push(`    ${key(server)} daddr ${server} tcp dport 53 accept`);
  }
  for (const r of policy.allowed) lines.push(`    ${key(r)} daddr ${cidr(r)} accept`);
  for (const r of policy.denied) lines.push(`    ${key(r)} daddr ${cidr(r)} goto refuse`);
  lines.push('  }', '}', '');
  return lines.join('\n');
}
