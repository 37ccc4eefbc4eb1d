import { existsSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostAddresses } from '../../server/platform/sandbox/network-policy.ts';
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
  openedPort: string;
  gateway: string[];
  hostAddresses: string[];
  metadata: string;
  abstractSocket: string;
  unixSocket: string;
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
  // Listeners on the host that tenant code must not reach: an abstract and a path unix socket.
  const sockets: Server[] = [];

  // A service on the host's loopback that the operator opens to tenant code.
  let opened: Server;

  beforeAll(async () => {
    opened = createServer((c) => c.end('opened'));
    await new Promise<void>((resolve) => opened.listen(0, '127.0.0.1', resolve));
    const openedPort = (opened.address() as AddressInfo).port;
    s = await startStack({
      env: {
        SLIPWAY_SANDBOX_ALLOW: REGISTRY_ALLOW,
        SLIPWAY_SANDBOX_HOST_PORTS: String(openedPort),
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
      openedPort,
      gateways: own.filter((a) => a.address.endsWith('.1')).map((a) => a.address),
      hostAddresses: own.map((a) => a.address),
      abstractSocket: `${marker}-abstract`,
      unixSocket: `/tmp/${marker}.sock`,
    };
    for (const path of [`\0${marker}-abstract`, `/tmp/${marker}.sock`]) {
      const server = createServer((c) => c.end('reached'));
      await new Promise<void>((resolve) => server.listen(path, resolve));
      sockets.push(server);
    }
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await Promise.all([...sockets, opened].map((server) => new Promise((r) => server?.close(r))));
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
      // Only the port the operator opened reaches the host's loopback.
      expect(results.openedPort).toBe('connected');
    });
    it("cannot reach the host through the gateway or the host's own addresses", () => {
      for (const r of [...results.gateway, ...results.hostAddresses]) expect(r).toBe('ECONNREFUSED');
    });
    it("cannot reach the service's unix sockets, abstract or in the file system", async () => {
      expect(results.abstractSocket).toBe('ECONNREFUSED');
      expect(results.unixSocket).toBe('ENOENT');
      // The same sockets answer on the host: the refusal is the sandbox's, not a wrong name.
      for (const path of [`\0${targets.abstractSocket as string}`, targets.unixSocket as string]) {
        const answer = await new Promise<string>((resolve, reject) =>
          connect({ path })
            .on('data', (d) => resolve(d.toString()))
            .on('error', reject),
        );
        expect(answer).toBe('reached');
      }
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
      // The plan's memory for the whole build (the test user's: enterprise), where there are control groups.
      expect(log).toMatch(
        (await testSandbox()).cgroups.version
          ? /^Sandbox: 64 processes, 8 GiB of memory in all \(enterprise plan\), CPU share 4, 100 MiB of disk/m
          : /^Sandbox: 64 processes, 1 GiB of memory per process, 100 MiB of disk/m,
      );
      const res = await s.fetchFromEdge(url);
      expect(await res.text()).toContain('still works');
    });
  });

  describe('a server app, at request time', () => {
    let results: Results & { writeOwnFiles: string };
    let url: string;

    beforeAll(async () => {
      const r = repo({
        'attack.mjs': attackSource,
        'targets.json': JSON.stringify({ ...targets, marker: `${marker}-app` }),
        'server.mjs': [
          "import { createServer } from 'node:http';",
          "import { readFileSync, writeFileSync } from 'node:fs';",
          "import { attack } from './attack.mjs';",
          "const t = JSON.parse(readFileSync('targets.json', 'utf8'));",
          'createServer(async (req, res) => {',
          "  if (req.url !== '/attack') return res.end('app still works');",
          "  let writeOwnFiles = 'written';",
          "  try { writeFileSync('server.mjs', ''); } catch (err) { writeOwnFiles = err.code; }",
          "  res.setHeader('content-type', 'application/json');",
          '  res.end(JSON.stringify({ ...(await attack(t)), writeOwnFiles }));',
          '}).listen(Number(process.env.PORT));',
        ].join('\n'),
        'package.json': JSON.stringify({
          name: 'attacker-app',
          private: true,
          scripts: { start: 'node server.mjs' },
        }),
      });
      const built = await deploy(r, 'attacker-app');
      expect(built.deployment.status, built.log).toBe('live');
      url = built.deployment.url;
      const res = await s.fetchFromEdge(`${url}/attack`);
      results = (await res.json()) as typeof results;
    }, 150_000);

    it('runs as another user, in its own PID namespace, and cannot signal the service', () => {
      expect(results.uid).toBe(1000);
      expect(results.seesService).toBe(false);
      expect(results.signalService).toBe('ESRCH');
      expect(results.serviceEnviron).toBe('ENOENT');
    });
    it('cannot read the data directory, nor change its own files', () => {
      expect(results.readKey).toBe('ENOENT');
      expect(results.readDatabase).toBe('ENOENT');
      expect(results.walkUp).toEqual([]);
      expect(results.writeOwnFiles).toBe('EROFS');
      expect(existsSync(join(s.dataDir, 'pwned'))).toBe(false);
      expect(existsSync(outsideFile)).toBe(false);
    });
    it('cannot reach loopback, the host, the metadata address or private ranges', () => {
      for (const r of [results.api, results.edge, results.postgres, results.apiIpv6, results.metadata]) {
        expect(r).toBe('ECONNREFUSED');
      }
      for (const r of [...results.gateway, ...results.hostAddresses]) expect(r).toBe('ECONNREFUSED');
      expect(results.privateRange.other).toBe('ECONNREFUSED');
    });
    it('still answers through the edge', async () => {
      const res = await s.fetchFromEdge(url);
      expect(await res.text()).toBe('app still works');
    });
  });

  describe('limits', () => {
    const buildWith = (name: string, script: string) =>
      deploy(
        repo({
          'build.mjs': script,
          'package.json': JSON.stringify({ name, private: true, scripts: { build: 'node build.mjs' } }),
        }),
        name,
      );

    it('processes: a fork bomb is stopped at SLIPWAY_SANDBOX_PROCESSES and leaves nothing behind', async () => {
      const { deployment, log } = await buildWith(
        'forks',
        [
          "import { spawn } from 'node:child_process';",
          'let failed = 0;',
          'const children = [];',
          'for (let i = 0; i < 200; i++) {',
          `  const c = spawn('sleep', ['120', '${marker}-fork'], { stdio: 'ignore' });`,
          "  c.on('error', (err) => { failed++; if (failed === 1) console.error(String(err)); });",
          '  children.push(c);',
          '}',
          'await new Promise((r) => setTimeout(r, 500));',
          "console.log('failed to start', failed);",
          'process.exit(failed > 0 ? 1 : 0);',
        ].join('\n'),
      );
      expect(deployment.status).toBe('failed');
      expect(log).toMatch(/spawn sleep EAGAIN/);
      expect(deployment.errorMessage).toMatch(/limit of 64 processes \(SLIPWAY_SANDBOX_PROCESSES\)/);
      await waitFor('the forked processes to end', () => hostProcesses(`${marker}-fork`).length === 0);
    }, 60_000);

    it('disk: a workspace past SLIPWAY_SANDBOX_DISK ends the build', async () => {
      const { deployment } = await buildWith(
        'fills-disk',
        [
          "import { writeFileSync } from 'node:fs';",
          'for (let i = 0; i < 15; i++) writeFileSync(`fill-${i}`, Buffer.alloc(10 * 1024 * 1024, 1));',
          'await new Promise((r) => setTimeout(r, 30_000));',
        ].join('\n'),
      );
      expect(deployment.status).toBe('failed');
      expect(deployment.errorMessage).toBe(
        'The build wrote more than 100 MiB in its workspace, the limit (SLIPWAY_SANDBOX_DISK).',
      );
    }, 60_000);

    it('file size: one file past SLIPWAY_SANDBOX_DISK is refused', async () => {
      const { deployment } = await buildWith(
        'big-file',
        [
          "import { execSync } from 'node:child_process';",
          "execSync('head -c 200000000 /dev/zero > big', { stdio: 'inherit' });",
        ].join('\n'),
      );
      expect(deployment.status).toBe('failed');
      // The file-size limit stops the write at 100 MiB; the workspace's file system, a little
      // smaller (its own bookkeeping), or the watcher may stop it first. Either way the build
      // ends for the disk limit, by name.
      expect(deployment.errorMessage).toMatch(
        /(A file grew past the limit of 100 MiB|The build wrote more than 100 MiB in its workspace, the limit) \(SLIPWAY_SANDBOX_DISK\)/,
      );
    }, 60_000);

    it('memory: an allocation past SLIPWAY_SANDBOX_MEMORY fails and says so', async () => {
      const { deployment } = await buildWith(
        'big-heap',
        'const b = Buffer.alloc(1.5 * 1024 ** 3, 1);\nconsole.log(b.length);',
      );
      expect(deployment.status).toBe('failed');
      expect(deployment.errorMessage).toMatch(/memory limit of 1 GiB per process \(SLIPWAY_SANDBOX_MEMORY\)/);
    }, 60_000);

    it('/tmp: writing past SLIPWAY_SANDBOX_TMP_SIZE fails and says so', async () => {
      const { deployment } = await buildWith(
        'fills-tmp',
        "import { writeFileSync } from 'node:fs';\nwriteFileSync('/tmp/fill', Buffer.alloc(32 * 1024 * 1024, 1));",
      );
      expect(deployment.status).toBe('failed');
      expect(deployment.errorMessage).toMatch(
        /The private \/tmp is full: it holds 16 MiB \(SLIPWAY_SANDBOX_TMP_SIZE\)/,
      );
    }, 60_000);
  });

  describe('the ordinary path', () => {
    it('installs a package from the registry (allowed by SLIPWAY_SANDBOX_ALLOW) and builds with it', async () => {
      const { deployment, log } = await deploy(
        repo({
          'package.json': JSON.stringify({
            name: 'with-deps',
            private: true,
            dependencies: { 'is-number': '7.0.0' },
            scripts: { build: 'node build.mjs' },
          }),
          'build.mjs': [
            "import { mkdirSync, writeFileSync } from 'node:fs';",
            "import isNumber from 'is-number';",
            "mkdirSync('dist', { recursive: true });",
            "writeFileSync('dist/index.html', `is-number says ${isNumber(5)}`);",
          ].join('\n'),
        }),
        'with-deps',
      );
      expect(deployment.status, log).toBe('live');
      expect(log).toMatch(/==> Installing dependencies: npm install/);
      const res = await s.fetchFromEdge(deployment.url);
      expect(await res.text()).toBe('is-number says true');
    }, 150_000);
  });
});
