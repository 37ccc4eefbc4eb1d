import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  repositoryRefusal,
  repositorySettings,
  staticRepositoryRefusal,
  type RepositorySettings,
} from '../../../server/features/github/repository-policy.ts';
import { loadConfig } from '../../../server/platform/config.ts';
import type { LookupAll } from '../../../server/core/ssrf.ts';

const UNREACHABLE =
  "is not reachable from builds (loopback, private, link-local and the server's own addresses are refused; " +
  'an operator can allow hosts with SLIPWAY_SANDBOX_ALLOW)';

/** A resolver with fixed answers; any other name does not exist. */
function fakeLookup(answers: Record<string, string[]>): LookupAll & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string) => {
    asked.push(host);
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
  return Object.assign(lookup, { asked });
}

describe('repository policy', () => {
  let root: string;
  let settings: (over?: Partial<RepositorySettings>) => RepositorySettings;
  const lookup = fakeLookup({
    'public.test': ['93.184.215.14'],
    'loopback.test': ['127.0.0.1'],
    'mixed.test': ['93.184.215.14', '10.1.2.3'],
    'scoped.test': ['fe80::1%eth0'],
    'git.internal': ['10.9.9.9'],
  });
  const full = (url: string, over?: Partial<RepositorySettings>) =>
    repositoryRefusal(url, settings(over), { lookup });

  beforeAll(() => {
    // realpath: on some systems the temp dir itself is reached through a link.
    root = realpathSync(mkdtempSync(join(tmpdir(), 'slipway-policy-')));
    for (const dir of ['data/workspaces/dep_1/src', 'artifacts', 'repos/web', 'outside/web']) {
      mkdirSync(join(root, dir), { recursive: true });
    }
    symlinkSync(join(root, 'data/workspaces'), join(root, 'repos/into-data'));
    symlinkSync(join(root, 'data'), join(root, 'data-link'));
    symlinkSync(join(root, 'outside'), join(root, 'repos/escape'));
    settings = (over = {}) => ({
      localRepositories: 'any',
      dataDir: join(root, 'data'),
      artifactsDir: join(root, 'artifacts'),
      allow: [],
      hostPorts: [],
      ...over,
    });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  describe('local repositories', () => {
    it('allows a directory outside the data and artifacts directories, in every spelling', async () => {
      for (const url of [
        `file://${root}/repos/web`,
        `file://localhost${root}/repos/web`,
        `${root}/repos/web`,
        `file://${root}/repos/w%65b`,
        `file://${root}/repos/not-yet-created`,
      ]) {
        expect(await full(url), url).toBeNull();
        expect(await staticRepositoryRefusal(url, settings()), url).toBeNull();
      }
    });

    it("keeps the README's quick start (file:///tmp/hello) working with the default settings", async () => {
      const defaults = repositorySettings(loadConfig({}));
      expect(defaults.localRepositories).toBe('any');
      expect(await staticRepositoryRefusal('file:///tmp/hello', defaults)).toBeNull();
      expect(await repositoryRefusal('file:///tmp/hello', defaults, { lookup })).toBeNull();
    });

    it('refuses the data and artifacts directories, what is below them, and what contains them', async () => {
      for (const path of [
        'data',
        'data/workspaces/dep_1/src',
        'data/workspaces/dep_2/not-created-yet',
        'artifacts',
        'artifacts/manifests',
        '',
      ]) {
        const url = `file://${join(root, path)}`;
        const reason = await full(url);
        expect(reason, url).toBe(
          `${join(root, path)} is in, or contains, the service's data or artifacts directory: repositories are never read from there`,
        );
        expect(await staticRepositoryRefusal(url, settings()), url).toBe(reason);
      }
      for (const url of ['file:///', '/', 'file://localhost/']) {
        expect(await staticRepositoryRefusal(url, settings()), url).toMatch(/data or artifacts directory/);
      }
    });

    it('refuses the ways into the data directory that a path can spell', async () => {
      for (const url of [
        `file://${root}/repos/../data/workspaces`,
        `file://${root}/repos/%2e%2e/data`,
        `file://${root}/repos%2f..%2fdata`,
        `file://${root}/data/workspaces?x`,
        `${root}/repos/web/../../data`,
      ]) {
        expect(await full(url), url).toMatch(/data or artifacts directory/);
      }
    });

    it('tells a folder named like a way out from one that is a way out', async () => {
      // Inside the data directory, under a name that begins with two dots: `relative()` gives
      // `..hidden`, which a check for a leading `..` would take for a way out of it.
      mkdirSync(join(root, 'data/..hidden/repo'), { recursive: true });
      for (const url of [`file://${root}/data/..hidden/repo`, `${root}/data/..hidden`]) {
        expect(await full(url), url).toMatch(/data or artifacts directory/);
      }
      // Beside it, under a name that begins with its name: outside, and allowed.
      mkdirSync(join(root, 'data-old/repo'), { recursive: true });
      mkdirSync(join(root, 'artifacts..bak'), { recursive: true });
      for (const url of [`file://${root}/data-old/repo`, `${root}/artifacts..bak`]) {
        expect(await full(url), url).toBeNull();
      }
    });

    it('follows symbolic links as the system does', async () => {
      for (const url of [
        `file://${root}/repos/into-data`,
        `file://${root}/repos/into-data/dep_1/src`,
        `file://${root}/repos/into-data/dep_9/not-created-yet`,
        // The parent of the link's target (the data dir), not `repos`, as a lexical `..` would say.
        `file://${root}/repos/into-data/..`,
      ]) {
        expect(await full(url), url).toMatch(/data or artifacts directory/);
      }
      // The data directory itself configured through a link.
      expect(await full(`file://${root}/data/workspaces`, { dataDir: join(root, 'data-link') })).toMatch(
        /data or artifacts directory/,
      );
    });

    it('refuses every local path when SLIPWAY_LOCAL_REPOSITORIES is off, and no network URL', async () => {
      const off = { localRepositories: 'off' as const };
      for (const url of [`file://${root}/repos/web`, `${root}/repos/web`]) {
        expect(await full(url, off)).toBe(
          'local repositories are turned off on this server (SLIPWAY_LOCAL_REPOSITORIES=off): use an https, ssh or git URL',
        );
      }
      expect(await full('https://public.test/acme/web.git', off)).toBeNull();
      expect(repositorySettings(loadConfig({ SLIPWAY_LOCAL_REPOSITORIES: 'off' })).localRepositories).toBe(
        'off',
      );
    });

    it('keeps local paths inside the configured roots, after links', async () => {
      const roots = repositorySettings(
        loadConfig({ SLIPWAY_LOCAL_REPOSITORIES: `${root}/repos,/srv/git` }),
      ).localRepositories;
      expect(roots).toEqual([`${root}/repos`, '/srv/git']);
      const only = { localRepositories: roots };
      expect(await full(`file://${root}/repos/web`, only)).toBeNull();
      expect(await full(`file://${root}/repos`, only)).toBeNull();
      for (const path of ['outside/web', 'repos/escape/web', 'repos/../outside/web', 'repository']) {
        expect(await full(`file://${root}/${path}`, only), path).toBe(
          `${root}/${path} is not inside a directory local repositories may be in (${root}/repos, /srv/git; SLIPWAY_LOCAL_REPOSITORIES)`,
        );
      }
      // The roots do not open the data directory.
      expect(await full(`file://${root}/data`, { localRepositories: [root] })).toMatch(/data or artifacts/);
    });

    it('refuses what git would read differently from this check', async () => {
      const forms =
        'must be an https, http, ssh, git or file URL, an scp-like address such as git@github.com:owner/repo.git, or an absolute path';
      expect(await full('repos/web')).toBe(forms);
      expect(await full('ext::sh -c touch% /tmp/pwned')).toBe(forms);
      expect(await full('ftp://public.test/web.git')).toBe(`${forms} (not ftp://)`);
      expect(await full(`file://otherhost${root}/repos/web`)).toBe(
        'a file:// URL must not name a host (otherhost): write file:///path',
      );
      expect(await full('https://public.test\\@127.0.0.1/web.git')).toBe(
        'must not contain spaces, backslashes or control characters',
      );
      expect(await full('https://public.test/web.git\x01')).toBe(
        'must not contain spaces, backslashes or control characters',
      );
      expect(await full('http:///web.git')).toBe(
        'must name a host, such as https://github.com/owner/repo.git',
      );
      expect(await full(`file://${root}/repos/web%00`)).toBe('a local path must not contain NUL characters');
    });
  });

  describe('network repositories', () => {
    it('refuses loopback, private, link-local and metadata addresses, whatever the port', async () => {
      for (const [url, host] of [
        ['git://127.0.0.1/web.git', '127.0.0.1'],
        ['git://127.0.0.1:9418/web.git', '127.0.0.1'],
        ['http://127.0.0.1:1/web.git', '127.0.0.1'],
        ['https://10.0.0.7/web.git', '10.0.0.7'],
        ['ssh://git@192.168.1.20:2222/web.git', '192.168.1.20'],
        ['http://169.254.169.254/latest', '169.254.169.254'],
        ['http://[fe80::1]/web.git', 'fe80::1'],
        ['git://[::1]:9418/web.git', '::1'],
        ['git://0.0.0.0/web.git', '0.0.0.0'],
        ['git@172.16.0.3:acme/web.git', '172.16.0.3'],
      ]) {
        expect(await full(url!), url).toBe(`${host} ${UNREACHABLE}`);
        expect(await staticRepositoryRefusal(url!, settings()), url).toBe(`${host} ${UNREACHABLE}`);
      }
    });

    it('reads other spellings of an address as the resolver does', async () => {
      for (const [url, host] of [
        ['http://[::ffff:127.0.0.1]/web.git', '::ffff:7f00:1'],
        ['git://[::ffff:127.0.0.1]:9418/web.git', '::ffff:7f00:1'],
        ['http://2130706433/web.git', '127.0.0.1'],
        ['git://0x7f.1/web.git', '127.0.0.1'],
        ['ssh://git@127.1/web.git', '127.0.0.1'],
        ['git@2130706433:web.git', '127.0.0.1'],
      ]) {
        expect(await staticRepositoryRefusal(url!, settings()), url).toBe(`${host} ${UNREACHABLE}`);
      }
    });

    it('lets through what SLIPWAY_SANDBOX_ALLOW allows', async () => {
      const allow = repositorySettings(loadConfig({ SLIPWAY_SANDBOX_ALLOW: '127.0.0.1,10.0.0.0/8' })).allow;
      for (const url of [
        'git://127.0.0.1:9418/web.git',
        'http://10.20.30.40/web.git',
        'http://[::ffff:127.0.0.1]/',
      ]) {
        expect(await full(url, { allow }), url).toBeNull();
        expect(await staticRepositoryRefusal(url, settings({ allow })), url).toBeNull();
      }
      expect(await full('git://127.0.0.2/web.git', { allow })).toBe(`127.0.0.2 ${UNREACHABLE}`);
      expect(await full('git://git.internal/web.git', { allow: ['git.internal'] })).toBeNull();
    });

    it("lets through this host's 127.0.0.1 at the ports of SLIPWAY_SANDBOX_HOST_PORTS, and only there", async () => {
      const hostPorts = repositorySettings(loadConfig({ SLIPWAY_SANDBOX_HOST_PORTS: '8418,3001' })).hostPorts;
      expect(hostPorts).toEqual([8418, 3001]);
      for (const url of [
        'http://127.0.0.1:8418/web.git',
        'git://127.0.0.1:3001/web.git',
        'ssh://git@127.0.0.1:3001/web.git',
        'http://x-access-token:abc@127.0.0.1:8418/web.git',
        'http://loopback.test:8418/web.git',
      ]) {
        expect(await full(url, { hostPorts }), url).toBeNull();
        if (!url.includes('.test')) {
          expect(await staticRepositoryRefusal(url, settings({ hostPorts })), url).toBeNull();
        }
      }
      for (const [url, host] of [
        ['http://127.0.0.1:8419/web.git', '127.0.0.1'],
        ['http://127.0.0.1/web.git', '127.0.0.1'],
        ['http://127.0.0.2:8418/web.git', '127.0.0.2'],
        ['http://10.0.0.7:8418/web.git', '10.0.0.7'],
        ['git@127.0.0.1:web.git', '127.0.0.1'],
      ]) {
        expect(await full(url!, { hostPorts }), url).toBe(`${host} ${UNREACHABLE}`);
      }
      expect(await full('http://mixed.test:8418/web.git', { hostPorts })).toMatch(/^mixed.test resolves to/);
      expect(() => loadConfig({ SLIPWAY_SANDBOX_HOST_PORTS: '80,70000' })).toThrow(
        'SLIPWAY_SANDBOX_HOST_PORTS must be a comma-separated list of TCP ports (1 to 65535), e.g. 4873,3001',
      );
    });

    it('resolves names and refuses one with any refused address, without saying which', async () => {
      expect(await full('https://public.test/acme/web.git')).toBeNull();
      expect(await full('git@public.test:acme/web.git')).toBeNull();
      expect(await full('https://93.184.215.14/acme/web.git')).toBeNull();
      expect(await full('https://[::ffff:93.184.215.14]/acme/web.git')).toBeNull();
      expect(await full('https://[2606:4700::1111]/acme/web.git')).toBeNull();
      for (const host of ['loopback.test', 'mixed.test', 'scoped.test']) {
        const reason = await full(`https://${host}/acme/web.git`);
        expect(reason).toBe(`${host} resolves to an address that ${UNREACHABLE}`);
        expect(reason).not.toMatch(/127\.0\.0\.1|10\.1\.2\.3/);
      }
      expect(await full('git://nowhere.test/web.git')).toBe('could not resolve nowhere.test (ENOTFOUND)');
    });

    it('looks nothing up for the API: names wait for the build', async () => {
      const before = lookup.asked.length;
      expect(await staticRepositoryRefusal('https://loopback.test/web.git', settings())).toBeNull();
      // An address the operator may allow by name is not refused before that name is resolved.
      expect(
        await staticRepositoryRefusal('git://10.9.9.9/web.git', settings({ allow: ['git.internal'] })),
      ).toBeNull();
      expect(lookup.asked.length).toBe(before);
    });
  });
});
