import { realpath as fsRealpath } from 'node:fs/promises';
import { isIP } from 'node:net';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Config } from '../../platform/config.ts';
import {
  buildNetworkPolicy,
  isReachable,
  parseRange,
  type NetworkPolicy,
} from '../../platform/sandbox/network-policy.ts';
import type { LookupAll } from '../../core/ssrf.ts';
import { parseRepositoryUrl } from './repository-url.ts';

/** The settings the rules read. */
export interface RepositorySettings {
  /** SLIPWAY_LOCAL_REPOSITORIES: `any`, `off`, or the absolute directories local repositories may be in. */
  localRepositories: 'any' | 'off' | readonly string[];
  /** Never readable as a repository, nor any directory that contains them. */
  dataDir: string;
  artifactsDir: string;
  /** SLIPWAY_SANDBOX_ALLOW: the private addresses, ranges and host names builds may reach anyway. */
  allow: readonly string[];
  /** SLIPWAY_SANDBOX_HOST_PORTS: ports of this host's 127.0.0.1 builds reach. */
  hostPorts: readonly number[];
}

export const repositorySettings = (config: Config): RepositorySettings => ({
  // The config types the setting as a string; anything but `any` reads as `off`, to fail closed.
  localRepositories: Array.isArray(config.localRepositories)
    ? config.localRepositories
    : config.localRepositories === 'any'
      ? 'any'
      : 'off',
  dataDir: config.dataDir,
  artifactsDir: config.artifactsDir,
  allow: config.sandbox.allow,
  hostPorts: config.sandbox.hostPorts,
});

/** Resolves symbolic links with the system's realpath(3); default fs.promises.realpath. */
export type Realpath = (path: string) => Promise<string>;

// The reason is the same whatever the port and whether anything listens there: an answer that
// changed with either would let a tenant scan the server's own ports.
const UNREACHABLE =
  "not reachable from builds (loopback, private, link-local and the server's own addresses are refused; " +
  'an operator can allow hosts with SLIPWAY_SANDBOX_ALLOW)';

/**
 * The path with symbolic links resolved as the system would when it opens it (`a/link/..` is
 * the parent of the link's target, not `a`). Where a component does not exist, the part that
 * does is resolved and the rest appended: the path cannot be opened today, but may be tomorrow.
 */
async function realOrNearest(path: string, realpath: Realpath): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realOrNearest(parent, realpath), basename(path));
  }
}

function isWithin(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
}

async function localRefusal(
  path: string,
  settings: RepositorySettings,
  realpath: Realpath,
): Promise<string | null> {
  if (settings.localRepositories === 'off') {
    return 'local repositories are turned off on this server (SLIPWAY_LOCAL_REPOSITORIES=off): use an https, ssh or git URL';
  }
  // Both spellings are compared: the resolved one follows links, the written one catches a
  // directory that does not exist yet.
  const forms = [resolve(path), await realOrNearest(path, realpath)];
  for (const dir of [settings.dataDir, settings.artifactsDir]) {
    const guarded = [resolve(dir), await realOrNearest(dir, realpath)];
    if (forms.some((p) => guarded.some((g) => isWithin(p, g) || isWithin(g, p)))) {
      return `${path} is in, or contains, the service's data or artifacts directory: repositories are never read from there`;
    }
  }
  const roots = settings.localRepositories;
  if (roots === 'any') return null;
  const real = forms[1]!;
  for (const root of roots) if (isWithin(real, await realOrNearest(root, realpath))) return null;
  return `${path} is not inside a directory local repositories may be in (${roots.join(', ')}; SLIPWAY_LOCAL_REPOSITORIES)`;
}

/** `::ffff:7f00:1` and `::ffff:127.0.0.1` -> `127.0.0.1`; an IPv4 address as it is; else null. */
function asIPv4(address: string): string | null {
  if (isIP(address) === 4) return address;
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!m) return null;
  const [hi, lo] = [parseInt(m[1]!, 16), parseInt(m[2]!, 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/**
 * isReachable, for the address a connection really goes to: an IPv4-mapped address connects over
 * IPv4, so it is checked as that IPv4 address (and an operator's IPv4 allowance covers it).
 */
function reachable(policy: NetworkPolicy, address: string): boolean {
  // A scope (`fe80::1%eth0`, from /etc/hosts) names an interface, not another address.
  const bare = address.split('%')[0]!;
  return isReachable(policy, asIPv4(bare) ?? bare);
}

async function addressesRefusal(
  host: string,
  addresses: string[],
  settings: RepositorySettings,
  lookup: LookupAll,
): Promise<string | null> {
  const policy = await buildNetworkPolicy(settings.allow, { lookup });
  if (addresses.every((a) => reachable(policy, a))) return null;
  // For a name, the address stays unsaid: the answer must not map the server's internal DNS.
  return isIP(host) ? `${host} is ${UNREACHABLE}` : `${host} resolves to an address that is ${UNREACHABLE}`;
}

/**
 * Why builds may not fetch `url`, or null when they may: the full check, run by the build just
 * before the checkout. Local paths must keep out of the data and artifacts directories and obey
 * SLIPWAY_LOCAL_REPOSITORIES; a host must resolve, and every address it resolves to must be
 * reachable under the sandbox's network policy. The sandbox's network enforces the same policy
 * on every connection git makes (redirects, later DNS answers); this check answers early and
 * with a reason.
 */
export async function repositoryRefusal(
  url: string,
  settings: RepositorySettings,
  io: { lookup: LookupAll; realpath?: Realpath },
): Promise<string | null> {
  const location = parseRepositoryUrl(url);
  if (location.kind === 'invalid') return location.message;
  if (location.kind === 'local') return localRefusal(location.path, settings, io.realpath ?? fsRealpath);
  const { host } = location;
  if (onHostPort(host, location.port, settings)) return null;
  let addresses: string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = (await io.lookup(host)).map((a) => a.address);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return `could not resolve ${host}${typeof code === 'string' ? ` (${code})` : ''}`;
    }
    if (addresses.length === 0) return `could not resolve ${host}`;
  }
  if (addresses.every((a) => onHostPort(a, location.port, settings))) return null;
  return addressesRefusal(host, addresses, settings, io.lookup);
}

/**
 * A service on this host's 127.0.0.1 at a port the operator opened to the sandbox
 * (SLIPWAY_SANDBOX_HOST_PORTS): the sandbox forwards exactly those ports of its own 127.0.0.1.
 */
function onHostPort(address: string, port: number | null, settings: RepositorySettings): boolean {
  if (port === null || isIP(address) === 0 || !settings.hostPorts.includes(port)) return false;
  return asIPv4(address.split('%')[0]!) === '127.0.0.1';
}

const noLookup: LookupAll = async () => [];

/**
 * What can be refused without DNS, for the API: the local path rules, and hosts written as an
 * address that no setting lets through. Names are left to the build's full check, and so is an
 * address an operator might allow by a host name in SLIPWAY_SANDBOX_ALLOW. The server's own
 * addresses are not known here either (the API may run on another machine than the builds).
 */
export async function staticRepositoryRefusal(
  url: string,
  settings: RepositorySettings,
  io: { realpath?: Realpath } = {},
): Promise<string | null> {
  const location = parseRepositoryUrl(url);
  if (location.kind === 'invalid') return location.message;
  if (location.kind === 'local') return localRefusal(location.path, settings, io.realpath ?? fsRealpath);
  const { host } = location;
  if (onHostPort(host, location.port, settings)) return null;
  if (isIP(host) === 0 || settings.allow.some((entry) => parseRange(entry) === null)) return null;
  const policy = await buildNetworkPolicy(settings.allow, { lookup: noLookup, host: [], dns: [] });
  return reachable(policy, host) ? null : `${host} is ${UNREACHABLE}`;
}
