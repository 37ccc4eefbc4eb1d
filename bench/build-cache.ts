import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type SlipwayClient } from '../api/client/index.ts';
import { createGitRepo } from '../test/helpers/git-repo.ts';
import { table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  apiUrl: string;
  token: string;
  projectId: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A Vite + React app as `npm create vite` makes it, with versions pinned. */
const APP: Record<string, string> = {
  'package.json': JSON.stringify(
    {
      name: 'vite-react-bench',
      private: true,
      version: '0.0.0',
      type: 'module',
      scripts: { dev: 'vite', build: 'vite build' },
      dependencies: { react: '19.2.0', 'react-dom': '19.2.0' },
      devDependencies: { vite: '7.3.8', '@vitejs/plugin-react': '5.2.0' },
    },
    null,
    2,
  ),
  'vite.config.js': `import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
export default defineConfig({ plugins: [react()] });
`,
  'index.html': `<!doctype html>
<html lang="en"><head><meta charset="UTF-8" /><title>Vite + React</title></head>
<body><div id="root"></div><script type="module" src="/src/main.jsx"></script></body></html>
`,
  'src/main.jsx': `import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import App from './App.jsx';
createRoot(document.getElementById('root')).render(<StrictMode><App /></StrictMode>);
`,
  'src/App.jsx': `import { useState } from 'react';
export default function App() {
  const [count, setCount] = useState(0);
  return <button onClick={() => setCount((c) => c + 1)}>count is {count}</button>;
}
`,
  '.gitignore': 'node_modules\ndist\n',
};

function writeFiles(dir: string, files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

const registry = () =>
  execFileSync('npm', ['config', 'get', 'registry'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();

/** Runs a command and returns how long it took; its output is kept only when it fails. */
function timed(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): number {
  const t0 = performance.now();
  execFileSync(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return performance.now() - t0;
}

/** POST a deployment and follow its log to the end: milliseconds to live and the cache's lines. */
async function deploy(api: SlipwayClient, projectId: string) {
  const t0 = performance.now();
  const d = await api.deployments.create(projectId, { target: 'production', branch: 'main' });
  const lines: string[] = [];
  for await (const line of api.deployments.followLogs(d.id)) lines.push(line);
  const ms = performance.now() - t0;
  const done = await api.deployments.get(d.id);
  if (done.status !== 'live') throw new Error(`bench build ${d.id} ${done.status}: ${lines.join('\n')}`);
  // The cache is saved after live: as a later push would, wait for it before the next build.
  for (let i = 0; i < 600; i++) {
    const { logs } = await api.deployments.logs(d.id, { tail: 1000 });
    if (/Build cache: (saved|not saved|hit)/.test(logs)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ms, cache: lines.filter((l) => l.startsWith('Build cache:') || l.includes('Skipping install')) };
}

/**
 * A real Vite + React app with its dependencies from the npm registry, in one run: a plain
 * `npm ci` (empty npm cache, as a first build has) and `npm run build` in a temporary folder,
 * then Slipway's first build of a new project (cache miss) and its second (cache hit), each
 * POST-to-live. Goals: the cached build at most 1.2 x the plain `npm run build`, the first at
 * most 1.1 x `npm ci && npm run build`.
 */
export async function benchBuildCache(rounds = 5): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'slipway-bench-cache-'));
  const lockDir = join(root, 'lock');
  writeFiles(lockDir, APP);
  execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: lockDir,
    stdio: 'ignore',
  });
  const lockfile = execFileSync('cat', ['package-lock.json'], { cwd: lockDir, encoding: 'utf8' });
  const repo = createGitRepo({ files: { ...APP, 'package-lock.json': lockfile } });
  // Some machines reach the registry through an address the build network refuses by default
  // (a documentation range here): allow the registry by name, as an operator would.
  const { info, stop } = await spawnBenchServer<Info>('bench/stack-server.ts', {
    SLIPWAY_SANDBOX_ALLOW: new URL(registry()).hostname,
  });
  try {
    const api = createClient({ baseUrl: info.apiUrl, token: info.token });
    const me = await api.projects.get(info.projectId);
    const ci: number[] = [];
    const build: number[] = [];
    const first: number[] = [];
    const cached: number[] = [];
    let lines: string[] = [];
    for (let r = 0; r < rounds; r++) {
      const work = join(root, `plain-${r}`);
      execFileSync('git', ['clone', '-q', repo.url, work]);
      const env = { ...process.env, npm_config_cache: join(root, `npm-cache-${r}`) };
      ci.push(timed('npm', ['ci', '--no-audit', '--no-fund'], work, env));
      build.push(timed('npm', ['run', 'build'], work, env));
      rmSync(work, { recursive: true, force: true });

      const project = await api.projects.create({
        name: `vite-cache-${r}-${Date.now()}`,
        repositoryUrl: repo.url,
        organizationId: me.organizationId,
      });
      first.push((await deploy(api, project.id)).ms);
      const again = await deploy(api, project.id);
      cached.push(again.ms);
      lines = again.cache;
    }
    const [c, b, f, h] = [median(ci), median(build), median(first), median(cached)];
    const firstGoal = 1.1 * (c + b);
    const cachedGoal = 1.2 * b;
    return [
      `A Vite + React app (vite 7, react 19, deps from the npm registry), median of ${rounds} rounds`,
      table([
        { case: 'npm ci (empty npm cache)', median_ms: Math.round(c) },
        { case: 'npm run build', median_ms: Math.round(b) },
        { case: 'Slipway first build, POST -> live (cache miss)', median_ms: Math.round(f) },
        { case: 'Slipway second build, POST -> live (cache hit)', median_ms: Math.round(h) },
      ]),
      `Second build's cache lines: ${lines.join(' | ')}`,
      `First build: ${(f / (c + b)).toFixed(2)} x (npm ci + npm run build); goal <= 1.1 -> ${f <= firstGoal ? 'met' : 'NOT met'}`,
      `Cached build: ${(h / b).toFixed(2)} x npm run build; goal <= 1.2 -> ${h <= cachedGoal ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    await stop();
    repo.remove();
    rmSync(root, { recursive: true, force: true });
  }
}
