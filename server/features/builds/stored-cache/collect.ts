import { rm } from 'node:fs/promises';
import type { CacheEntry, CollectedCaches } from '../build-cache-store.ts';
import { listProject, listProjects, listSaved, removeSaved } from './listing.ts';
import { ABANDONED_MS, archiveKey, PREFIX } from './saved.ts';
import type { StoredCacheState } from './state.ts';

/** BuildCacheStore.discard: that cache, in the store and on this disk. */
export async function discardCache(
  st: StoredCacheState,
  projectId: string,
  entry: CacheEntry,
): Promise<void> {
  const saved = await listProject(st, projectId);
  const s = saved.find((x) => x.name === entry.id);
  if (s) await removeSaved(st, s);
  await rm(`${entry.dir}.json`, { force: true });
  await rm(entry.dir, { recursive: true, force: true });
}

/** BuildCacheStore.usage: the bytes of these projects' caches, read from the listing alone. */
export async function cacheUsage(st: StoredCacheState, projectIds: readonly string[]): Promise<number> {
  return (await listProjects(st, projectIds)).reduce((n, s) => n + s.bytes, 0);
}

/** BuildCacheStore.collect: caches of deleted projects, caches unused too long, abandoned archives. */
export async function collectCaches(
  st: StoredCacheState,
  { liveProjectIds, unusedBefore }: { liveProjectIds: ReadonlySet<string>; unusedBefore: Date },
): Promise<CollectedCaches> {
  const collected: CollectedCaches = { caches: 0, bytes: 0 };
  const { saved, archives } = await listSaved(st, PREFIX);
  for (const s of saved) {
    if (liveProjectIds.has(s.projectId) && s.usedAt >= unusedBefore) {
      archives.delete(archiveKey(s));
      continue;
    }
    await removeSaved(st, s);
    archives.delete(archiveKey(s));
    collected.caches++;
    collected.bytes += s.bytes;
  }
  // Archives left without a description: a save that stopped half-way, or a removal.
  const abandoned = Date.now() - ABANDONED_MS;
  for (const [key, at] of archives) if (at.getTime() < abandoned) await st.blobs.delete(key);
  return collected;
}
