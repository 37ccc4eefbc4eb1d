import { createHash } from 'node:crypto';
import { lstat, readFile, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { BuildCacheStore, CacheEntry, OrganizationCacheQuota } from './build-cache-store.ts';
import { type CacheLanes, describeLane } from '../../platform/store/cache-lanes.ts';
import { describeBytes } from '../../core/format.ts';
import { keepTrees, restoreTrees, totalOf } from './link-tree.ts';

/** Where a build's cache lives and how big it may be. */
export interface BuildCacheOptions {
  store: BuildCacheStore;
  projectId: string;
  /** Where the build may restore from and saves to, by what it saw (cacheLanes). */
  lanes: CacheLanes;
  /** Larger caches are not saved (SLIPWAY_BUILD_CACHE_SIZE). */
  maxBytes: number;
  /** The organization's quota for the caches of all its projects (its plan's `caches`). */
  organization?: OrganizationCacheQuota & { plan: string };
}

/** A cache's paths, relative to the workspace, by what they are for. */
export interface CachedPaths {
  /** The package managers' download caches in the build's home. */
  downloads: string[];
  /** The installed `node_modules`: an unchanged lockfile needs no install. */
  modules: string[];
  /** The frameworks' own caches (some inside `node_modules`): they change every build. */
  framework: string[];
}

export function cachedPaths(workspace: string, src: string, app: string): CachedPaths {
  const rel = (p: string) => relative(workspace, p);
  const unique = (xs: string[]) => [...new Set(xs)];
  return {
    downloads: [
      'home/.npm',
      'home/.cache',
      'home/.local/share/pnpm',
      'home/.bun/install/cache',
      'home/.yarn/berry/cache',
    ],
    modules: unique([join(src, 'node_modules'), join(app, 'node_modules')].map(rel)),
    framework: unique(
      [
        join(app, 'node_modules', '.cache'),
        join(app, 'node_modules', '.vite'),
        join(app, '.next', 'cache'),
      ].map(rel),
    ),
  };
}

const under = (rel: string, roots: string[]) => roots.some((r) => rel === r || rel.startsWith(`${r}/`));

/**
 * The cache's key: the lockfile (else package.json), the install command, the package manager
 * and Node.js's version (native modules), and the app's folder. Only a build with the same key
 * skips its install; any other restores the downloads and installs.
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

export interface Restored {
  outcome: 'hit' | 'partial' | 'miss';
  /** The cache restored from: a save after a hit takes the downloads it did not restore from it. */
  entry: CacheEntry | null;
}

/**
 * Restores the project's cache into the workspace. The entry returned is held (object storage:
 * this machine's copy is not pruned) until its `release`, which the build calls when it ends. A hit (saved under `key`) brings back
 * `node_modules` as hard links to read-only files (no bytes copied; a build can replace them,
 * never change them) and the framework caches as copies; a partial hit (another key: the
 * lockfile or install command changed) brings back copies of the downloads and framework
 * caches for the install to start from. A cache that does not come back whole is discarded
 * and what it left is removed.
 */
export async function restoreCache(
  c: BuildCacheOptions,
  key: string,
  at: { workspace: string; paths: CachedPaths },
  own: (made: string[]) => Promise<void>,
  info: (line: string) => void,
): Promise<Restored> {
  const entry = await c.store.find(c.projectId, c.lanes.restore, key);
  if (!entry) {
    info('Build cache: miss (none saved yet)');
    return { outcome: 'miss', entry: null };
  }
  const exact = entry.key === key;
  const paths = exact
    ? [...at.paths.modules, ...at.paths.framework.filter((f) => !under(f, at.paths.modules))]
    : [...at.paths.downloads, ...at.paths.framework];
  const copy = exact ? (rel: string) => under(rel, at.paths.framework) : () => true;
  const clear = (p: string) => rm(p, { recursive: true, force: true });
  try {
    const got = await restoreTrees(entry.dir, paths, at.workspace, { copy, own, clear });
    for (const [path, count] of Object.entries(got)) {
      const saved = entry.trees[path];
      // Paths inside a saved one (a framework cache in node_modules) have no count of their own.
      if (saved && (saved.files !== count.files || saved.bytes !== count.bytes)) {
        throw new Error(`${path}: ${count.files} files of ${saved.files}`);
      }
    }
    info(
      `Build cache: ${exact ? 'hit' : 'partial hit'}, restored ${describeBytes(totalOf(got).bytes)}` +
        (entry.lane === c.lanes.save ? '' : ` saved by ${describeLane(entry.lane)}`) +
        (exact ? '' : ' for another lockfile or install command; installing from it'),
    );
    return { outcome: exact ? 'hit' : 'partial', entry };
  } catch {
    info('Build cache: the saved cache could not be restored; discarded, building without it');
    entry.release?.();
    await c.store.discard(c.projectId, entry);
    for (const p of paths) await clear(join(at.workspace, p));
    return { outcome: 'miss', entry: null };
  }
}

const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

/**
 * Saves the workspace's cached paths as the project's cache for this branch and `key`, by hard
 * links where it can (see keepTrees). After a hit it is saved again only when a framework cache
 * exists (those change every build), with the downloads taken from the cache it restored.
 * Never fails the build: a cache that cannot be saved is said so and skipped.
 */
export async function saveCache(
  c: BuildCacheOptions,
  key: string,
  at: { workspace: string; paths: CachedPaths; restored: Restored },
  info: (line: string) => void,
): Promise<void> {
  const hit = at.restored.outcome === 'hit';
  const inWorkspace = (ps: string[]) => Promise.all(ps.map((p) => exists(join(at.workspace, p))));
  if (hit && !(await inWorkspace(at.paths.framework)).some(Boolean)) return;
  const fromWorkspace = hit
    ? [...at.paths.modules, ...at.paths.framework]
    : [...at.paths.downloads, ...at.paths.modules, ...at.paths.framework];
  const carried = hit ? at.paths.downloads : [];
  const present = (await inWorkspace(fromWorkspace)).flatMap((yes, i) => (yes ? [fromWorkspace[i]!] : []));
  try {
    const org = c.organization;
    const result = await c.store.save(
      c.projectId,
      c.lanes.save,
      key,
      c.maxBytes,
      async (dir) => {
        const own = await keepTrees(at.workspace, unnested(present), dir);
        const entry = at.restored.entry;
        if (!entry || carried.length === 0) return own;
        const there = (await Promise.all(carried.map((p) => exists(join(entry.dir, p))))).flatMap((yes, i) =>
          yes ? [carried[i]!] : [],
        );
        return { ...own, ...(await keepTrees(entry.dir, there, dir)) };
      },
      org,
    );
    const quota = org
      ? `the organization's build caches quota of ${describeBytes(org.maxBytes)} (${org.plan} plan)`
      : '';
    if (!result.saved) {
      info(
        result.over === 'organization'
          ? `Build cache: not saved, ${describeBytes(result.bytes)} is over ${quota} on its own`
          : `Build cache: not saved, ${describeBytes(result.bytes)} is over the limit of ${describeBytes(c.maxBytes)} (SLIPWAY_BUILD_CACHE_SIZE)`,
      );
      return;
    }
    const plural = (n: number) => `${n} older cache${n === 1 ? '' : 's'}`;
    const notes = [
      ...(result.evicted ? [`${plural(result.evicted)} of the project evicted`] : []),
      ...(result.quotaEvicted
        ? [`${plural(result.quotaEvicted)} of the organization evicted for ${quota}`]
        : []),
    ];
    info(`Build cache: saved ${describeBytes(result.bytes)}${notes.length ? ` (${notes.join('; ')})` : ''}`);
  } catch (err) {
    info(`Build cache: not saved (${(err as Error).message})`);
  }
}

/** The paths without those inside another of them (each file is kept once). */
function unnested(paths: string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((p) => !unique.some((q) => q !== p && under(p, [q])));
}
