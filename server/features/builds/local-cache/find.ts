import { stat } from 'node:fs/promises';
import type { CacheSource } from '../../../platform/store/cache-lanes.ts';
import type { CacheEntry } from '../cache-store-interface.ts';
import { newestOf, remove } from './listing.ts';
import { type LocalCacheState, markUsed, paths, readMeta } from './state.ts';

/** BuildCacheStore.find: the caches of `sources` in order, the one saved under `key` first. */
export async function findCache(
  st: LocalCacheState,
  projectId: string,
  sources: readonly CacheSource[],
  key: string,
): Promise<CacheEntry | null> {
  const found: CacheEntry[] = [];
  for (const source of sources) {
    const lanes = 'lane' in source ? [source.lane] : await newestOf(st, projectId, source.newestOf);
    for (const lane of lanes) {
      if (found.some((e) => e.lane === lane)) continue;
      const entry = await laneCache(st, projectId, lane);
      if (entry) found.push(entry);
    }
  }
  const chosen = found.find((e) => e.key === key) ?? found[0] ?? null;
  if (chosen) await markUsed(`${chosen.dir}.json`);
  return chosen;
}

/** A lane's cache, when its description names that lane and its folder is there. */
async function laneCache(st: LocalCacheState, projectId: string, lane: string): Promise<CacheEntry | null> {
  const p = paths(st, projectId, lane);
  const meta = await readMeta(p.meta);
  // A description must name the lane asked for: its folder is found by the lane's hash.
  if (!meta || meta.lane !== lane) return null;
  const isDir = await stat(p.tree).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) {
    await remove(p.tree);
    return null;
  }
  return { dir: p.tree, trees: meta.trees, bytes: meta.bytes, lane, key: meta.key };
}
