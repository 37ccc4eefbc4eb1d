import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  buildNetworkPolicy,
  isReachable,
  nftRuleset,
  parseRange,
  resolvers,
} from '../../../server/platform/sandbox/network-policy.ts';
import { findTools } from '../../../server/platform/sandbox/detect.ts';

const policy = (allow: string[], lookup = async (_: string) => [] as { address: string; family: 4 | 6 }[]) =>
  buildNetworkPolicy(allow, {
    lookup,
    host: [
      { address: '192.168.7.9', prefix: 32, family: 4 },
      { address: '198.19.0.1', prefix: 32, family: 4 },
    ],
    dns: ['10.255.255.53'],
  });

describe('the sandbox network policy', () => {
  it('lets public addresses through and refuses loopback, private, link-local and the host', async () => {
    const p = await policy([]);
    expect(['1.1.1.1', '2606:4700::1111', '140.82.112.3'].map((a) => isReachable(p, a))).toEqual([
      true,
      true,
      true,
    ]);
    const refused = [
      '127.0.0.1',
      '127.9.9.9',
      '::1',
      '10.0.0.1',
      '172.16.5.5',
      '192.168.1.1',
      '169.254.169.254',
    ];
    refused.push(
      'fe80::1',
      'fd00::1',
      '100.64.0.1',
      '::ffff:127.0.0.1',
      '203.0.113.80',
      '198.19.0.1',
      '0.0.0.0',
    );
    expect(refused.filter((a) => isReachable(p, a))).toEqual([]);
  });

  it('lets the operator allow addresses, ranges and host names, resolved when the policy is built', async () => {
    const p = await policy(['10.1.2.3', '203.0.113.0/24', 'npm.internal'], async (name) =>
      name === 'npm.internal' ? [{ address: '172.20.0.5', family: 4 }] : [],
    );
    expect(['10.1.2.3', '203.0.113.80', '172.20.0.5'].map((a) => isReachable(p, a))).toEqual([
      true,
      true,
      true,
    ]);
    expect(['10.1.2.4', '172.20.0.6', '127.0.0.1'].map((a) => isReachable(p, a))).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('reads name servers and ranges, and says no to what is neither', () => {
    expect(
      resolvers('# comment\nnameserver 10.255.255.53\nnameserver ::1\nsearch x\nnameserver bogus\n'),
    ).toEqual(['10.255.255.53', '::1']);
    expect(parseRange('10.0.0.0/8')).toEqual({ address: '10.0.0.0', prefix: 8, family: 4 });
    expect(parseRange('fd00::/8')).toEqual({ address: 'fd00::', prefix: 8, family: 6 });
    expect([parseRange('10.0.0.0/33'), parseRange('npm.internal'), parseRange('1.2.3.4/x')]).toEqual([
      null,
      null,
      null,
    ]);
  });

  it('writes rules nftables accepts: DNS and the allow list before the refusals', async () => {
    const rules = nftRuleset(await policy(['203.0.113.0/24']));
    const lines = rules.split('\n').map((l) => l.trim());
    const dns = lines.indexOf('ip daddr 10.255.255.53 udp dport 53 accept');
    const allowed = lines.indexOf('ip daddr 203.0.113.0/24 accept');
    const refused = lines.indexOf('ip daddr 203.0.113.0/24 goto refuse');
    expect(dns).toBeGreaterThan(0);
    expect(allowed).toBeGreaterThan(dns);
    expect(refused).toBeGreaterThan(allowed);
    expect(lines).toContain('ip daddr 127.0.0.0/8 goto refuse');
    expect(lines).toContain('ip6 daddr ::1/128 goto refuse');
    if (!('tools' in findTools())) {
      process.stderr.write('NOTICE: nft is not installed: the rules were not checked by nftables itself.\n');
      return;
    }
    // nft -c parses and checks without loading, in a namespace of our own.
    execFileSync('unshare', ['-Urn', 'nft', '-c', '-f', '-'], { input: rules });
  });
});
