import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactStore, type ArtifactStore } from '../../../server/features/builds/artifacts.ts';
import {
  BuildCancelledError,
  BuildError,
  BuildTimeoutError,
} from '../../../server/platform/sandbox/build-error.ts';
import {
  buildDeployment,
  type BuildDeploymentOptions,
  type BuildLogType,
} from '../../../server/features/builds/build-deployment.ts';
import { createGitRepo, type GitRepo } from '../../helpers/git-repo.ts';
import type { Sandbox } from '../../../server/platform/sandbox/index.ts';
import { hostProcesses } from '../../helpers/host-processes.ts';
import { testSandbox } from '../../helpers/sandbox.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

describe('buildDeployment', () => {
  let root: string;
  let artifacts: ArtifactStore;
  const repos: GitRepo[] = [];
  let sandbox: Sandbox;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'slipway-build-'));
    // The sandbox's user passes through it to the workspaces (as through a data directory).
    chmodSync(root, 0o711);
    artifacts = createArtifactStore(join(root, 'artifacts'));
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    repos.forEach((r) => r.remove());
  });

  const fixtureRepo = (name: string) => {
    const repo = createGitRepo({ fromFixture: name });
    repos.push(repo);
    return repo;
  };

  const build = async (repo: GitRepo, opts: Partial<BuildDeploymentOptions> = {}) => {
    const lines: { type: BuildLogType; line: string }[] = [];
    const run = buildDeployment({
      sandbox: (sandbox = await testSandbox()),
      repositoryUrl: repo.url,
      ref: 'main',
      env: {},
      secrets: [],
      workspaceRoot: join(root, 'workspaces'),
      artifacts,
      timeoutMs: 60_000,
      maxOutputBytes: 10 * 1024 * 1024,
      log: (type, line) => lines.push({ type, line }),
      ...opts,
    });
    const result = await run.catch((err: Error) => err);
    return { result, lines, text: lines.map((l) => l.line) };
  };

  const workspaces = () => readdirSync(join(root, 'workspaces'));
  const blobCount = () =>
    readdirSync(join(root, 'artifacts', 'blobs')).reduce(
      (n, prefix) => n + readdirSync(join(root, 'artifacts', 'blobs', prefix)).length,
      0,
    );
  const fileOf = async (artifactId: string, path: string) => {
    const manifest = await artifacts.readManifest(artifactId);
    const entry = manifest?.files[path];
    if (!entry) throw new Error(`${path} is not in ${artifactId}`);
    return readFileSync(artifacts.blobPath(entry.hash), 'utf8');
  };

  describe('a static build', () => {
    let repo: GitRepo;
    let first: Awaited<ReturnType<typeof build>>;
    let blobsAfterFirst: number;

    beforeAll(async () => {
      repo = fixtureRepo('static-build');
      process.env.SLIPWAY_TEST_SERVER_ONLY = 'server-secret';
      try {
        first = await build(repo, {
          env: { PUBLIC_MESSAGE: 'hello', API_TOKEN: 'tok_abcdef123456', PATH: '/nowhere' },
          secrets: ['tok_abcdef123456'],
        });
      } finally {
        delete process.env.SLIPWAY_TEST_SERVER_ONLY;
      }
      blobsAfterFirst = blobCount();
    });

    it('checks out, detects, builds and stores the output', async () => {
      const result = first.result;
      if (result instanceof Error) throw result;
      expect(result).toMatchObject({
        commitHash: repo.git('rev-parse', 'HEAD'),
        commitMessage: 'Initial commit',
        author: 'author@example.com',
        framework: 'static',
        frameworkDetected: true,
        kind: 'static',
        spa: false,
        fileCount: 3,
      });
      expect(result.startCommand).toBeUndefined();
      const manifest = await artifacts.readManifest(result.artifactId);
      expect(Object.keys(manifest!.files)).toEqual(['/assets/app.js', '/build-env.json', '/index.html']);
      expect(await fileOf(result.artifactId, '/index.html')).toContain('Built by Slipway');
    });

    it('logs each phase with a header line', () => {
      const text = first.text;
      expect(text[0]).toBe(sandbox.banner()[0]);
      expect(text[1]).toBe('Project settings: none, everything is detected');
      expect(text[2]).toBe('==> Cloning repository');
      expect(text).toContain('Detected framework: Static site (build: npm run build, output: dist)');
      expect(text).toContain('==> Skipping install: no dependencies in package.json');
      expect(text).toContain('==> Building: npm run build');
      expect(text).toContain('Bundling 1 module');
      expect(text).toContain('warning: this build is a fixture');
      expect(text).toContain('done without a trailing newline');
      expect(text).toContain('==> Storing build output from dist');
      expect(text.filter((l) => /^Stored 3 files \(\d+ bytes\)$/.test(l))).toHaveLength(1);
      expect(text.at(-1)).toMatch(/^==> Build completed in \d+(\.\d)?m?s$/);
      expect(first.lines.every((l) => l.type === 'build')).toBe(true);
    });

    it('gives the build the project variables and nothing of the server environment', async () => {
      if (first.result instanceof Error) throw first.result;
      const env = JSON.parse(await fileOf(first.result.artifactId, '/build-env.json'));
      expect(env).toMatchObject({
        PUBLIC_MESSAGE: 'hello',
        SERVER_ONLY: null,
        NODE_ENV: 'production',
        CI: '1',
      });
      expect(env.HOME.startsWith(join(root, 'workspaces'))).toBe(true);
      expect(env.KEYS).toEqual(['API_TOKEN', 'CI', 'HOME', 'NODE_ENV', 'PATH', 'PUBLIC_MESSAGE']);
    });

    it('masks secret values in the log', () => {
      expect(first.text).toContain('Using token *** for the CMS');
      expect(first.text.join('\n')).not.toContain('tok_abcdef123456');
    });

    it('removes the workspace', () => {
      expect(workspaces()).toEqual([]);
    });

    it('stores identical files once across two builds', async () => {
      const second = await build(repo, {
        env: { PUBLIC_MESSAGE: 'hello', API_TOKEN: 'tok_abcdef123456', PATH: '/nowhere' },
      });
      if (second.result instanceof Error) throw second.result;
      if (first.result instanceof Error) throw first.result;
      expect(second.result.artifactId).not.toBe(first.result.artifactId);
      const before = (await artifacts.readManifest(first.result.artifactId))!.files;
      const after = (await artifacts.readManifest(second.result.artifactId))!.files;
      expect(after['/index.html']).toEqual(before['/index.html']);
      expect(after['/assets/app.js']).toEqual(before['/assets/app.js']);
      // build-env.json names the build's own HOME, so it is the only new blob.
      expect(after['/build-env.json']!.hash).not.toBe(before['/build-env.json']!.hash);
      expect(blobCount()).toBe(blobsAfterFirst + 1);
      expect(workspaces()).toEqual([]);
    });
  });

  it('serves a plain static site from the root without .git', async () => {
    const { result, text } = await build(fixtureRepo('static-site'));
    if (result instanceof Error) throw result;
    expect(text).toContain('Detected framework: Static site (build: none, output: .)');
    expect(text).toContain('==> No build command: serving the files as they are');
    const manifest = await artifacts.readManifest(result.artifactId);
    expect(Object.keys(manifest!.files)).toEqual(['/assets/style.css', '/index.html']);
  });

  it('leaves symbolic links out of the artifact and says so', async () => {
    const repo = createGitRepo({ files: { 'index.html': '<h1>links</h1>' } });
    repos.push(repo);
    symlinkSync('/etc/passwd', join(repo.dir, 'passwd.txt'));
    repo.commit({}, 'Add a link');
    const { result, text } = await build(repo);
    if (result instanceof Error) throw result;
    expect(Object.keys((await artifacts.readManifest(result.artifactId))!.files)).toEqual(['/index.html']);
    expect(text).toContain(
      'Left out 1 files that cannot be published (links are never followed): /passwd.txt (symbolic link)',
    );
  });

  it('leaves a file whose name is not UTF-8 out, says so, and shows no host path', async () => {
    const repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({ scripts: { build: 'node build.mjs' } }),
        // The build writes dist/caf\xe9.txt: Latin-1, not UTF-8.
        'build.mjs': [
          "import { mkdirSync, writeFileSync } from 'node:fs';",
          "mkdirSync('dist', { recursive: true });",
          "writeFileSync('dist/index.html', '<h1>names</h1>');",
          "writeFileSync(Buffer.from('dist/caf\\xe9.txt', 'latin1'), 'latin-1 name');",
        ].join('\n'),
      },
    });
    repos.push(repo);
    const { result, text } = await build(repo);
    if (result instanceof Error) throw result;
    expect(Object.keys((await artifacts.readManifest(result.artifactId))!.files)).toEqual(['/index.html']);
    expect(text.join('\n')).toContain('/caf\ufffd.txt (file name is not valid UTF-8)');
    expect(text.join('\n')).not.toContain('ENOENT');
  });

  it("follows the project's framework setting", async () => {
    const { result, text } = await build(fixtureRepo('static-build'), { framework: 'vite' });
    if (result instanceof Error) throw result;
    expect(result).toMatchObject({ framework: 'vite', frameworkDetected: false, spa: true });
    expect(text).toContain("Framework (the project's setting): Vite (build: npm run build, output: dist)");
  });

  it('stores a Node.js app whole, with its start command', async () => {
    const { result, text } = await build(fixtureRepo('node-server'));
    if (result instanceof Error) throw result;
    expect(result).toMatchObject({
      framework: 'node',
      kind: 'node',
      startCommand: 'npm run start',
      spa: false,
    });
    expect(text).toContain('Detected framework: Node.js (build: npm run build, start: npm run start)');
    const manifest = await artifacts.readManifest(result.artifactId);
    expect(Object.keys(manifest!.files)).toEqual([
      '/build.mjs',
      '/package.json',
      '/server.mjs',
      '/version.json',
    ]);
  });

  it('fails with the exit code when the build command fails, keeping its output', async () => {
    const { result, lines, text } = await build(fixtureRepo('failing-build'));
    expect(result).toBeInstanceOf(BuildError);
    expect((result as Error).message).toBe('Building failed: "npm run build" exited with code 1.');
    expect(text).toContain('Compiling 3 modules');
    expect(text).toContain("Error: Cannot find module './missing-module.js'");
    expect(lines.at(-1)).toEqual({
      type: 'error',
      line: 'Building failed: "npm run build" exited with code 1.',
    });
    expect(workspaces()).toEqual([]);
  });

  it('kills a build that runs over the time limit, with everything it started', async () => {
    const began = Date.now();
    const { result, lines, text } = await build(fixtureRepo('slow-build'), { timeoutMs: 10_000 });
    // The build would hang for 10 minutes: ending within a minute is the limit at work, with room
    // for a loaded machine's checkout and kill.
    expect(Date.now() - began).toBeLessThan(60_000);
    expect(result).toBeInstanceOf(BuildTimeoutError);
    expect((result as Error).message).toBe('Build exceeded the 10 second limit (SLIPWAY_BUILD_TIMEOUT).');
    expect(lines.at(-1)).toEqual({
      type: 'error',
      line: 'Build exceeded the 10 second limit (SLIPWAY_BUILD_TIMEOUT).',
    });
    expect(text).toContain('grandchild started');
    await waitFor('the grandchild to end', () => hostProcesses('slipway-slow-build-grandchild').length === 0);
    expect(workspaces()).toEqual([]);
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    const build$ = build(fixtureRepo('slow-build'), {
      signal: controller.signal,
      log: (_type, line) => {
        if (line === 'grandchild started') controller.abort();
      },
    });
    const { result } = await build$;
    expect(result).toBeInstanceOf(BuildCancelledError);
    expect(workspaces()).toEqual([]);
  });

  it('says what went wrong when the repository cannot be checked out', async () => {
    const repo = fixtureRepo('static-site');
    const { result, lines } = await build(repo, { ref: 'no-such-branch' });
    expect((result as Error).message).toBe(`Branch "no-such-branch" was not found in ${repo.url}.`);
    expect(lines.at(-1)?.type).toBe('error');
    expect(workspaces()).toEqual([]);
  });

  it('says when there is nothing it knows how to build', async () => {
    const repo = createGitRepo({ files: { 'README.md': '# nothing to serve' } });
    repos.push(repo);
    const { result } = await build(repo);
    expect((result as Error).message).toMatch(/^Could not tell how to build this repository/);
  });

  it('refuses an output over the size limit', async () => {
    const { result } = await build(fixtureRepo('static-site'), { maxOutputBytes: 100 });
    expect((result as Error).message).toMatch(
      /^The build output is \d+ bytes, over the 100 bytes limit \(SLIPWAY_MAX_OUTPUT_SIZE\)/,
    );
  });

  it('says in the build log what routing rules the output has, and which lines are skipped, without failing', async () => {
    const repo = createGitRepo({
      files: {
        'index.html': '<h1>hi</h1>',
        _redirects: '/old /new 301\n/blog/* /posts/:splat\n/bad\n',
        _headers: '/*\n  X-Frame-Options: DENY\n',
      },
    });
    repos.push(repo);
    const { result, text } = await build(repo);
    expect(result).not.toBeInstanceOf(Error);
    expect(text).toContain('Routing rules: 2 redirects, 1 header rule from _redirects and _headers');
    expect(text.find((l) => l.startsWith('_redirects line 3'))).toMatch(/^_redirects line 3 skipped: /);
  });

  it('refuses an empty output directory', async () => {
    const repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({ scripts: { build: `node -e "require('fs').mkdirSync('dist')"` } }),
      },
    });
    repos.push(repo);
    const { result } = await build(repo);
    expect((result as Error).message).toBe('The output directory dist is empty.');
  });

  it('says which output directory is missing, with the framework hint', async () => {
    const { result } = await build(fixtureRepo('static-build'), { framework: 'nextjs' });
    expect((result as Error).message).toBe(
      'The build did not create the output directory "out". Next.js makes either a server (`.next/standalone`) ' +
        "or, with `output: 'export'`, the static site `out`. Check the build log, or set the project's framework if it was detected wrongly.",
    );
  });
});

describe('a framework server’s output folders are the checkout’s own', () => {
  const attack = (link: string, outside: string) =>
    createGitRepo({
      files: {
        'package.json': JSON.stringify({ name: 'x', dependencies: { next: '16.4.3' } }),
        // A "Next.js build" that points the folders Slipway stores at the build machine's own files.
        'build.js':
          "const fs = require('fs');\n" +
          "fs.mkdirSync('.next/standalone', { recursive: true });\n" +
          "fs.writeFileSync('.next/standalone/server.js', '');\n" +
          `fs.symlinkSync(${JSON.stringify(outside)}, ${JSON.stringify(link)});\n`,
      },
    });

  for (const link of ['.next/static', 'public']) {
    it(`refuses ${link} as a link to a folder outside, and stores nothing of it`, async () => {
      const root = tempDir();
      chmodSync(root, 0o711);
      const artifacts = createArtifactStore(join(root, 'artifacts'));
      const outside = tempDir({ 'secret.txt': 'the build machine’s own file' });
      chmodSync(outside, 0o755);
      const repo = attack(link, outside);
      try {
        const lines: string[] = [];
        const result = await buildDeployment({
          sandbox: await testSandbox(),
          repositoryUrl: repo.url,
          ref: 'main',
          framework: 'nextjs',
          settings: {
            installCommand: '',
            buildCommand: 'node build.js',
            outputDirectory: null,
            rootDirectory: null,
          },
          env: {},
          secrets: [],
          workspaceRoot: join(root, 'workspaces'),
          artifacts,
          timeoutMs: 60_000,
          maxOutputBytes: 10 * 1024 * 1024,
          log: (_type, line) => lines.push(line),
        }).catch((err: Error) => err);
        const stored = result instanceof Error ? null : result;
        const manifest = stored?.assetsArtifactId
          ? await artifacts.readManifest(stored.assetsArtifactId)
          : null;
        expect(Object.keys(manifest?.files ?? {}).filter((p) => p.endsWith('secret.txt'))).toEqual([]);
        expect((result as Error).message).toBe(
          `The Next.js server (standalone output)'s folder "${link}" must be a directory inside the repository.`,
        );
      } finally {
        repo.remove();
      }
    });
  }
});
