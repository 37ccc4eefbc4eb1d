import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostAddresses } from '../../server/sandbox/network-policy.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { hostProcesses } from '../helpers/host-processes.ts';
import { REGISTRY_ALLOW, testSandbox } from '../helpers/sandbox.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const attackSource = readFileSync(join(import.meta.dirname, 'attack.mjs'), 'utf8');
const available = !(await testSandbox()).unavailable && (await testSandbox()).mode === 'bubblewrap';
if (!available) {
  process.stderr.write('NOTICE: test/security skipped: the sandbox cannot run on this machine.\n');
}

/** What attack.mjs reports, probe by probe. */
interface Results {
  uid: number;
  dataDirEntries: string[] | string;
  readKey: number | string;
  readDatabase: number | string;
  walkUp: string[];
  serviceEnviron: number | string;
  seesService: boolean;
  processCount: number;
  signalService: string;
  writeDataDir: string;
  writeOutside: string;
  api: string;
  edge: string;
  postgres: string;
  apiIpv6: string;
  gateway: string[];
  hostAddresses: string[];
  metadata: string;
  privateRange: { dns: string; other: string };
  workspaces: string[] | string;
  artifacts: boolean;
}

describe.skipIf(!available)('tenant code is contained', () => {
  let s: Stack;
  let api: ReturnType<Stack['client']>;
  let orgId: string;
  const repos: GitRepo[] = [];
  const marker = `slipway-escape-${process.pid}-${Date.now()}`;
  const outsideFile = `/tmp/${marker}-outside`;
  let targets: Record<string, unknown>;

  beforeAll(async () => {
    s = await startStack({
      env: {
        SLIPWAY_SANDBOX_ALLOW: REGISTRY_ALLOW,
        SLIPWAY_SANDBOX_PROCESSES: '64',
        SLIPWAY_SANDBOX_DISK: '100MiB',
        SLIPWAY_SANDBOX_TMP_SIZE: '16MiB',
        SLIPWAY_SANDBOX_MEMORY: '1GiB',
        SLIPWAY_BUILD_TIMEOUT: '90s',
      },
    });
    const user = await s.user();
    api = s.client(user.token);
    orgId = user.orgId;
    const own = hostAddresses().filter((a) => a.family === 4 && !a.address.startsWith('127.'));
    targets = {
      dataDir: s.dataDir,
      servicePid: process.pid,
      serviceMarker: 'vitest',
      marker,
      outsideFile,
      apiPort: Number(new URL(s.apiUrl).port),
      edgePort: s.edgePort,
      gateways: own.filter((a) => a.address.endsWith('.1')).map((a) => a.address),
      hostAddresses: own.map((a) => a.address),
    };
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    repos.forEach((r) => r.remove());
    rmSync(outsideFile, { force: true });
  });

  const repo = (files: Record<string, string>) => {
    const r = createGitRepo({ files });
    repos.push(r);
    return r;
  };

  /** Creates a project from `r`, deploys it and waits until it is live or failed. */
  const deploy = async (r: GitRepo, name: string) => {
    const project = await api.projects.create({ name, repositoryUrl: r.url, organizationId: orgId });
    const created = await api.deployments.create(project.id);
    const done = await waitFor(
      `deployment of ${name} to finish`,
      async () => {
        const d = await api.deployments.get(created.id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      120_000,
    );
    const log = (await api.deployments.logs(created.id)).logs;
    return { deployment: done, log };
  };

  describe('a build script', () => {
    let results: Results;
    let log: string;
    let url: string;

    beforeAll(async () => {
      const r = repo({
        'attack.mjs': attackSource,
        'targets.json': JSON.stringify(targets),
        'build.mjs': [
          "import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';",
          "import { attack } from './attack.mjs';",
          "const results = await attack(JSON.parse(readFileSync('targets.json', 'utf8')));",
          "mkdirSync('dist', { recursive: true });",
          "writeFileSync('dist/results.json', JSON.stringify(results));",
          "writeFileSync('dist/index.html', '<h1>still works</h1>');",
        ].join('\n'),
        'package.json': JSON.stringify({
          name: 'attacker',
          private: true,
          scripts: { build: 'node build.mjs' },
        }),
      });
      const built = await deploy(r, 'attacker');
      log = built.log;
      expect(built.deployment.status, log).toBe('live');
      const res = await s.fetchFromEdge(`${built.deployment.url}/results.json`);
      results = (await res.json()) as Results;
      url = built.deployment.url;
    }, 150_000);

    it('runs as another user than the service', () => {
      expect(results.uid).toBe(1000);
      expect(results.uid).not.toBe(process.getuid!());
    });
    it('cannot read the data directory by absolute path', () => {
      expect(results.readKey).toBe('ENOENT');
      expect(results.readDatabase).toBe('ENOENT');
      // The path to its own workspace is all there is of the data directory.
      expect(results.dataDirEntries).toEqual(['workspaces']);
      expect(results.workspaces).toHaveLength(1);
      expect(results.artifacts).toBe(false);
    });
    it('cannot find the data directory by walking up from its workspace', () => {
      expect(results.walkUp).toEqual([]);
    });
    it("cannot read the service's environment, see its process or signal it", () => {
      expect(results.serviceEnviron).toBe('ENOENT');
      expect(results.seesService).toBe(false);
      expect(results.signalService).toBe('ESRCH');
      // Its own PID namespace: the sandbox's init, the build's processes and nothing else.
      expect(results.processCount).toBeLessThan(10);
    });
    it('cannot reach the API, the edge or PostgreSQL on loopback (IPv4 and IPv6)', () => {
      expect(results.api).toBe('ECONNREFUSED');
      expect(results.edge).toBe('ECONNREFUSED');
      expect(results.postgres).toBe('ECONNREFUSED');
      expect(results.apiIpv6).toBe('ECONNREFUSED');
    });
    it("cannot reach the host through the gateway or the host's own addresses", () => {
      for (const r of [...results.gateway, ...results.hostAddresses]) expect(r).toBe('ECONNREFUSED');
    });
    it('cannot reach the metadata address or private ranges, but DNS works', () => {
      expect(results.metadata).toBe('ECONNREFUSED');
      expect(results.privateRange.other).toBe('ECONNREFUSED');
    });
    it('cannot write outside its workspace (checked on the host)', () => {
      // Refused (EROFS) where the data directory is outside /tmp; in tests it is under /tmp, whose
      // private copy inside the sandbox takes the write. Either way the host never sees it.
      expect(['EROFS', 'written']).toContain(results.writeDataDir);
      expect(existsSync(join(s.dataDir, 'pwned'))).toBe(false);
      // /tmp inside is private: the write lands there, never in the host's /tmp.
      expect(existsSync(outsideFile)).toBe(false);
    });
    it('leaves no process behind after the build (checked on the host)', () => {
      expect(hostProcesses(marker)).toEqual([]);
    });
    it('still builds and serves the ordinary way', async () => {
      expect(log).toMatch(/^Sandbox: 64 processes, 1 GiB of memory per process, 100 MiB of disk/m);
      const res = await s.fetchFromEdge(url);
      expect(await res.text()).toContain('still works');
    });
  });
});
