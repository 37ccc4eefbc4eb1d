import type { CacheEntry } from '../build-cache-store.ts';
import type { CacheSource } from '../../../platform/store/cache-lanes.ts';
import { listProject, newestPerFolder } from './listing.ts';
import { materialize } from './materialize.ts';
import { folderOf, keyHash, type Saved } from './saved.ts';
import type { StoredCacheState } from './state.ts';

interface Candidate {
  s: Saved;
  lane: string | null;
}

/** BuildCacheStore.find: the newest cache of each source's lanes, those saved under `key` first. */
export async function findCache(
  st: StoredCacheState,
  projectId: string,
  sources: readonly CacheSource[],
  key: string,
): Promise<CacheEntry | null> {
  const candidates = candidatesOf(newestPerFolder(await listProject(st, projectId)), sources);
  const wanted = keyHash(key);
  const ordered = [
    ...candidates.filter((c) => c.s.keyHash === wanted),
    ...candidates.filter((c) => c.s.keyHash !== wanted),
  ];
  for (const c of ordered) {
    const entry = await materialize(st, c.s, c.lane).catch(() => null);
    if (entry) return entry;
  }
  return null;
}

/** The caches `sources` name, in their order, each lane folder once. */
function candidatesOf(newest: Saved[], sources: readonly CacheSource[]): Candidate[] {
  const candidates: Candidate[] = [];
  for (const source of sources) {
    const found =
      'lane' in source
        ? newest.filter((s) => s.folder === folderOf(source.lane)).map((s) => ({ s, lane: source.lane }))
        : newest.filter((s) => s.kind === source.newestOf).map((s) => ({ s, lane: null }));
    for (const c of found) if (!candidates.some((x) => x.s.folder === c.s.folder)) candidates.push(c);
  }
  return candidates;
}
