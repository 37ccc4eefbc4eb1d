import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactStore, type ArtifactStore } from '../../../server/features/builds/artifacts.ts';
import { BuildError } from '../../../server/platform/sandbox/build-error.ts';
import {
  buildDeployment,
  type BuildDeploymentOptions,
} from '../../../server/features/builds/build-deployment.ts';
import type { BuildSettings } from '../../../server/platform/store/build-spec.ts';
import { createGitRepo, type GitRepo } from '../../helpers/git-repo.ts';
import { testSandbox } from '../../helpers/sandbox.ts';

const NONE: BuildSettings = {
  installCommand: null,
  buildCommand: null,
  outputDirectory: null,
  rootDirectory: null,
};
const pkg = (o: object) => JSON.stringify(o);

/** Real builds in the sandbox with a project's own settings: monorepos, commands, output. */
describe('build settings', () => {
  let root: string;
  let artifacts: ArtifactStore;
  const repos: GitRepo[] = [];

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'slipway-build-settings-'));
    chmodSync(root, 0o711);
    artifacts = createArtifactStore(join(root, 'artifacts'));
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    repos.forEach((r) => r.remove());
  });

  const repoOf = (files: Record<string, string>) => {
    const repo = createGitRepo({ files });
    repos.push(repo);
    return repo;
  };
  const build = async (
    repo: GitRepo,
    settings: Partial<BuildSettings>,
    opts: Partial<BuildDeploymentOptions> = {},
  ) => {
    const lines: string[] = [];
    const result = await buildDeployment({
      sandbox: await testSandbox(),
      repositoryUrl: repo.url,
      ref: 'main',
      env: { npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
      secrets: [],
      workspaceRoot: join(root, 'workspaces'),
      artifacts,
      timeoutMs: 120_000,
      maxOutputBytes: 10 * 1024 * 1024,
      log: (_type, line) => lines.push(line),
      settings: { ...NONE, ...settings },
      ...opts,
    }).catch((err: Error) => err);
    return { result, text: lines };
  };
  const files = async (artifactId: string) =>
    Object.keys((await artifacts.readManifest(artifactId))!.files).sort();
  const fileOf = async (artifactId: string, path: string) => {
    const entry = (await artifacts.readManifest(artifactId))!.files[path]!;
    return readFileSync(artifacts.blobPath(entry.hash), 'utf8');
  };

  it('builds the app in rootDirectory and serves its output, saying so in the first lines', async () => {
    const repo = repoOf({
      'README.md': 'a monorepo',
      'apps/site/package.json': pkg({ scripts: { build: 'mkdir -p dist && cp page.html dist/index.html' } }),
      'apps/site/page.html': '<h1>site</h1>',
      'apps/other/index.html': 'other',
    });
    const { result, text } = await build(repo, { rootDirectory: 'apps/site' });
    if (result instanceof Error) throw result;
    expect(text[1]).toBe('Project settings: root directory apps/site; the rest is detected');
    expect(text).toContain('==> Building (in apps/site): npm run build');
    expect(text).toContain('==> Storing build output from apps/site/dist');
    expect(await files(result.artifactId)).toEqual(['/index.html']);
  });

  it('runs the install and build commands and serves the output directory the project sets', async () => {
    const repo = repoOf({
      'package.json': pkg({ scripts: { build: 'exit 9' } }),
      'site/index.html': 'never served as is',
    });
    const { result, text } = await build(repo, {
      installCommand: 'echo installed > marker.txt',
      buildCommand: 'mkdir -p public/x && cat marker.txt > public/x/index.html',
      outputDirectory: 'public',
    });
    if (result instanceof Error) throw result;
    expect(text[1]).toBe(
      'Project settings: install command "echo installed > marker.txt", build command "mkdir -p public/x && cat marker.txt > public/x/index.html", output directory public; the rest is detected',
    );
    expect(text).toContain('==> Installing dependencies: echo installed > marker.txt');
    expect(await files(result.artifactId)).toEqual(['/x/index.html']);
    expect(await fileOf(result.artifactId, '/x/index.html')).toBe('installed\n');
  });

  it('an empty build command skips the build and serves the files as they are', async () => {
    const repo = repoOf({ 'package.json': pkg({ scripts: { build: 'exit 9' } }), 'index.html': 'as is' });
    const { result, text } = await build(repo, { buildCommand: '' });
    if (result instanceof Error) throw result;
    expect(text).toContain("==> No build: the project's build command is empty");
    expect(await files(result.artifactId)).toEqual(['/index.html', '/package.json']);
  });

  it('installs a workspace member at the repository root, where its sibling package is linked', async () => {
    const repo = repoOf({
      'package.json': pkg({ name: 'mono', private: true, workspaces: ['apps/*', 'packages/*'] }),
      'packages/greeting/package.json': pkg({ name: 'greeting', version: '1.0.0', main: 'index.js' }),
      'packages/greeting/index.js': "module.exports = 'hello from a workspace';",
      'apps/web/package.json': pkg({
        name: 'web',
        version: '1.0.0',
        dependencies: { greeting: '1.0.0' },
        scripts: {
          build: `mkdir -p dist && node -e "require('fs').writeFileSync('dist/index.html', require('greeting'))"`,
        },
      }),
    });
    const { result, text } = await build(repo, { rootDirectory: 'apps/web' });
    if (result instanceof Error) throw new Error(`${result.message}\n${text.join('\n')}`);
    expect(text).toContain('==> Installing dependencies: npm install');
    expect(text).toContain('==> Building (in apps/web): npm run build');
    expect(await fileOf(result.artifactId, '/index.html')).toBe('hello from a workspace');
  });

  it('a server app in a subfolder keeps the whole checkout and starts in its folder', async () => {
    const repo = repoOf({
      'services/api/package.json': pkg({ scripts: { start: 'node server.js' } }),
      'services/api/server.js':
        'require("http").createServer((q, s) => s.end("api")).listen(process.env.PORT);',
    });
    const { result } = await build(repo, { rootDirectory: 'services/api' });
    if (result instanceof Error) throw result;
    expect(result.kind).toBe('node');
    expect(result.startCommand).toBe("cd 'services/api' && npm run start");
    expect(await files(result.artifactId)).toEqual(['/services/api/package.json', '/services/api/server.js']);
  });

  it('refuses a root directory that is missing or leads out of the repository through a link', async () => {
    const repo = repoOf({ 'index.html': 'x' });
    const missing = await build(repo, { rootDirectory: 'apps/none' });
    expect(missing.result).toBeInstanceOf(BuildError);
    expect((missing.result as Error).message).toBe(
      'The root directory "apps/none" does not exist in the repository. Check the project\'s rootDirectory.',
    );
    const linked = repoOf({ 'index.html': 'x' });
    const { symlinkSync } = await import('node:fs');
    symlinkSync('/etc', join(linked.dir, 'escape'));
    linked.git('add', '-A');
    linked.git('commit', '-qm', 'a link out');
    const out = await build(linked, { rootDirectory: 'escape' });
    expect(out.result).toBeInstanceOf(BuildError);
    expect((out.result as Error).message).toBe(
      'The root directory "escape" must be a directory inside the repository.',
    );
    const output = await build(linked, { outputDirectory: 'escape' });
    expect((output.result as Error).message).toBe(
      'The output directory "escape" must be a directory inside the repository.',
    );
  });

  it('says when detection changed since the previous build, and when the files disagree with the setting', async () => {
    const repo = repoOf({
      'package.json': pkg({ scripts: { start: 'node server.js' } }),
      'server.js': 'require("http").createServer((q, s) => s.end("app")).listen(process.env.PORT);',
    });
    const changed = await build(
      repo,
      {},
      { previousFramework: { slug: 'static', deploymentId: 'dpl_before' } },
    );
    if (changed.result instanceof Error) throw changed.result;
    expect(changed.result).toMatchObject({ framework: 'node', kind: 'node', frameworkDetected: true });
    expect(changed.text).toContain('Detected framework changed: static for dpl_before, node now.');
    const pinned = await build(repo, {}, { framework: 'static' });
    expect(pinned.text).toContain(
      "Note: the files look like Node.js (node), but the project's framework setting is static. Set framework to null to detect it on every build.",
    );
  });
});
