import { createHash } from 'node:crypto';
import { constants, copyFile, lstat, readFile, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { BuildCacheStore } from './build-cache-store.ts';
import { describeBytes } from './format.ts';

/** Where a build's cache lives and how big it may be. */
export interface BuildCacheOptions {
  store: BuildCacheStore;
  projectId: string;
  /** Saved under this branch; restored from it, else from `fallbackBranch` (production's). */
  branch: string;
  fallbackBranch: string;
  /** Larger archives are not saved (SLIPWAY_BUILD_CACHE_SIZE). */
  maxBytes: number;
}

/** Runs a command in the build's sandbox, in the workspace; true when it exited 0. */
export type SandboxRun = (argv: string[]) => Promise<boolean>;

/**
 * What a cache holds, relative to the workspace: the package managers' download caches in the
 * build's home, the installed `node_modules` (so an unchanged lockfile needs no install), and
 * the frameworks' own caches.
 */
export function cachedPaths(workspace: string, src: string, app: string): string[] {
  const rel = (p: string) => relative(workspace, p);
  const home = [
    'home/.npm',
    'home/.cache',
    'home/.local/share/pnpm',
    'home/.bun/install/cache',
    'home/.yarn/berry/cache',
  ];
  const dirs = [join(src, 'node_modules'), join(app, 'node_modules'), join(app, '.next', 'cache')].map(rel);
  return [...new Set([...home, ...dirs])];
}

/** Framework caches that change on every build: worth saving again after a hit. */
const frameworkCaches = (app: string) => [
  join(app, 'node_modules', '.cache'),
  join(app, '.next', 'cache'),
  join(app, 'node_modules', '.vite'),
];

/**
 * The cache's key: the lockfile (else package.json), the install command, the package manager
 * and Node.js's version (native modules), and the app's folder. Only a build with the same key
 * skips its install; any other restores the cache and installs.
 */
export async function cacheKey(
  installDir: string,
  lockfile: string | null,
  install: string,
  appPath: string,
): Promise<string> {
  const hash = createHash('sha256');
  const manifest = await readFile(join(installDir, lockfile ?? 'package.json')).catch(() => Buffer.alloc(0));
  hash.update(manifest);
  hash.update(JSON.stringify({ install, lockfile, node: process.version, appPath }));
  return hash.digest('hex').slice(0, 32);
}

const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

/**
 * Restores the project's cache into the workspace (the archive is copied in and unpacked by the
 * sandbox's user, so a crafted archive can only touch this workspace). `'hit'` when it was saved
 * under `key`; `'partial'` when under another key (an earlier lockfile: the install still runs,
 * from warm download and framework caches); `'miss'` otherwise. A cache that does not unpack is
 * discarded and what it left is removed.
 */
export async function restoreCache(
  c: BuildCacheOptions,
  key: string,
  at: { workspace: string; paths: string[] },
  run: SandboxRun,
  prepare: (paths: string[]) => Promise<void>,
  info: (line: string) => void,
): Promise<'hit' | 'partial' | 'miss'> {
  const branches = c.branch === c.fallbackBranch ? [c.branch] : [c.branch, c.fallbackBranch];
  const entry = await c.store.find(c.projectId, branches, key);
  if (!entry) {
    info('Build cache: miss (none saved yet)');
    return 'miss';
  }
  const local = join(at.workspace, 'cache-in.tgz');
  try {
    // Never through a link the workspace might hold: the copy is made by the service, not the sandbox.
    await rm(local, { force: true });
    await copyFile(entry.file, local, constants.COPYFILE_EXCL);
    await prepare([local]);
    const ok = await run(['tar', '-xzf', 'cache-in.tgz']);
    if (!ok) throw new Error('tar failed');
    const exact = entry.key === key;
    info(
      `Build cache: ${exact ? 'hit' : 'partial hit'}, restored ${describeBytes(entry.bytes)}` +
        (entry.branch === c.branch ? '' : ` saved by branch ${entry.branch}`) +
        (exact ? '' : ' for another lockfile or install command; installing from it'),
    );
    return exact ? 'hit' : 'partial';
  } catch {
    info('Build cache: the saved cache could not be restored; discarded, building without it');
    await c.store.discard(c.projectId, entry.branch);
    for (const p of at.paths) await rm(join(at.workspace, p), { recursive: true, force: true });
    return 'miss';
  } finally {
    await rm(local, { force: true });
  }
}

/**
 * Saves the workspace's cached paths as the project's cache for this branch and `key`. After a
 * hit it is saved again only when a framework cache exists (those change every build). Never
 * fails the build: a cache that cannot be saved is said so and skipped.
 */
export async function saveCache(
  c: BuildCacheOptions,
  key: string,
  at: { workspace: string; paths: string[]; app: string; hit: boolean },
  run: SandboxRun,
  info: (line: string) => void,
): Promise<void> {
  if (at.hit && !(await Promise.all(frameworkCaches(at.app).map(exists))).some(Boolean)) return;
  const present: string[] = [];
  for (const p of at.paths) if (await exists(join(at.workspace, p))) present.push(p);
  if (present.length === 0) return;
  const out = join(at.workspace, 'cache-out.tgz');
  try {
    await rm(out, { force: true });
    // gzip -1: most of the size win for a fraction of the time.
    const ok = await run(['tar', '-I', 'gzip -1', '-cf', 'cache-out.tgz', '--', ...present]);
    if (!ok) throw new Error('tar failed');
    const made = await lstat(out);
    if (!made.isFile()) throw new Error('the archive is not a regular file');
    const bytes = made.size;
    if (bytes > c.maxBytes) {
      info(
        `Build cache: not saved, ${describeBytes(bytes)} is over the limit of ${describeBytes(c.maxBytes)} (SLIPWAY_BUILD_CACHE_SIZE)`,
      );
      return;
    }
    const saved = await c.store.save(c.projectId, c.branch, key, out);
    info(
      `Build cache: saved ${describeBytes(saved.bytes)}` +
        (saved.evicted
          ? ` (${saved.evicted} older cache${saved.evicted === 1 ? '' : 's'} of the project evicted)`
          : ''),
    );
  } catch (err) {
    info(`Build cache: not saved (${(err as Error).message})`);
  } finally {
    await rm(out, { force: true });
  }
}
