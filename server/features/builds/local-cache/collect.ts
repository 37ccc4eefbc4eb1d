import { readdir, rm, stat } from 'node:fs/promises';
import { type CollectedCaches, isProjectId } from '../cache-store-interface.ts';
import { described, remove } from './listing.ts';
import { type LocalCacheState, projectDir } from './state.ts';

/** BuildCacheStore.collect: caches of deleted projects, and caches unused since `unusedBefore`. */
export async function collectCaches(
  st: LocalCacheState,
  { liveProjectIds, unusedBefore }: { liveProjectIds: ReadonlySet<string>; unusedBefore: Date },
): Promise<CollectedCaches> {
  const collected = { caches: 0, bytes: 0 };
  for (const projectId of (await readdir(st.dir).catch(() => [] as string[])).filter(isProjectId)) {
    const entries = await described(st, projectId);
    const live = liveProjectIds.has(projectId);
    for (const e of entries) {
      // Its description's time: written by the save, moved by each restore (markUsed).
      const usedAt = await stat(`${e.base}.json`).then(
        (s) => s.mtime,
        () => new Date(0),
      );
      if (live && usedAt >= unusedBefore) continue;
      await remove(e.base);
      collected.caches++;
      collected.bytes += e.bytes;
    }
    if (!live) await rm(projectDir(st, projectId), { recursive: true, force: true });
  }
  return collected;
}
