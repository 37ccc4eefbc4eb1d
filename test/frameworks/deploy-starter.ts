import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { request } from 'node:http';
import { type StarterName, starter } from '../helpers/starters.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';

/**
 * Real frameworks' starters, deployed with no settings through the whole service: the builds
 * install from the npm registry (the sandbox is told it may reach it: here its name resolves into
 * a documentation range, which builds are otherwise refused).
 */
export const FRAMEWORK_ENV = {
  SLIPWAY_SANDBOX_ALLOW: 'registry.npmjs.org',
  SLIPWAY_BUILD_TIMEOUT: '10m',
  SLIPWAY_DEFAULT_PLAN: 'enterprise',
};

/** A copy of the starter's repository with the test's own files added in a second commit. */
export async function starterWith(
  name: StarterName,
  files: Record<string, string | Buffer>,
): Promise<{
  url: string;
  remove(): void;
}> {
  const source = await starter(name);
  const dir = mkdtempSync(join(tmpdir(), `slipway-${name}-`));
  cpSync(source, dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: tmpdir(),
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
      },
    });
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'The test’s pages');
  execFileSync('chmod', ['-R', 'a+rX', dir]);
  return { url: `file://${dir}`, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Creates a project of the repository with no settings, deploys it and waits for the end. */
export async function deployWithoutSettings(
  s: Stack,
  name: string,
  url: string,
): Promise<{ deployment: Deployment; log: string; api: ReturnType<Stack['client']> }> {
  const { token, orgId } = await s.user();
  const api = s.client(token);
  const project = await api.projects.create({ name, repositoryUrl: url, organizationId: orgId });
  const created = await api.deployments.create(project.id);
  const deployment = await deploymentDone(api, created.id, 540_000, 1000);
  const { logs } = await api.deployments.logs(created.id, { tail: 10000 });
  return { deployment, log: logs, api };
}

/** A request (GET unless told) through the edge, its body read as it arrives, with the time of each chunk. */
export function timedChunks(
  s: Stack,
  deploymentUrl: string,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  chunks: { at: number; text: string }[];
  body: Buffer;
}> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: s.edgePort,
        path,
        method,
        headers: { ...headers, host: new URL(deploymentUrl).host },
      },
      (res) => {
        const chunks: { at: number; text: string }[] = [];
        const bytes: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          chunks.push({ at: performance.now() - started, text: c.toString('utf8') });
          bytes.push(c);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, chunks, body: Buffer.concat(bytes) }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

type Get = (path: string) => ReturnType<typeof timedChunks>;

/** Two requests for `path` render two different `rendered-<time>-<random>` values: no static export passes. */
export async function perRequest(get: Get, path: string): Promise<void> {
  const value = async () => /(rendered-\d+-[0-9.]+)/.exec((await get(path)).body.toString())?.[1];
  const a = await value();
  const b = await value();
  expect(a).toMatch(/^rendered-/);
  expect(b).toMatch(/^rendered-/);
  expect(a).not.toBe(b);
}

/**
 * The first script or style of the page whose path starts with `prefix` (SvelteKit's are relative,
 * `./_app/...`; `main-` is taken from the root), answered by the edge itself, never the app (its ETag is the file's
 * SHA-256, which no framework's server sends), and kept by browsers for a year.
 */
export async function edgeAsset(get: Get, html: string, prefix: string): Promise<string> {
  const found = new RegExp(`(?<![\\w-])(${prefix}[^"'\\s>]+\\.(?:js|css))`).exec(html)?.[1];
  expect(found, html.slice(0, 2000)).toBeDefined();
  const path = found!.startsWith('/') ? found! : `/${found!}`;
  const res = await get(path);
  expect(res.status).toBe(200);
  expect(String(res.headers['cache-control'])).toContain('immutable');
  expect(String(res.headers.etag)).toMatch(/^"[0-9a-f]{64}"$/);
  return path;
}

export { startStack };
