import { isProjectId, safeProject } from '../build-cache-store.ts';
import { archiveKey, byTime, metaKey, parseKey, PREFIX, type Saved } from './saved.ts';
import type { StoredCacheState } from './state.ts';

/** The saved caches under `prefix`, oldest first, and every archive with its modified time. */
export async function listSaved(
  st: StoredCacheState,
  prefix: string,
): Promise<{ saved: Saved[]; archives: Map<string, Date> }> {
  const saved: Saved[] = [];
  const archives = new Map<string, Date>();
  for await (const o of st.blobs.list(prefix)) {
    if (o.key.endsWith('.tar.gz')) archives.set(o.key, o.modifiedAt);
    else {
      const s = parseKey(o.key, o.modifiedAt);
      if (s) saved.push(s);
    }
  }
  return { saved: saved.sort(byTime), archives };
}

export const listProject = async (st: StoredCacheState, projectId: string) =>
  (await listSaved(st, `${PREFIX}${safeProject(projectId)}/`)).saved;

/** The saved caches of every project named (each once), oldest first. */
export async function listProjects(st: StoredCacheState, projectIds: readonly string[]): Promise<Saved[]> {
  const all: Saved[] = [];
  for (const id of new Set(projectIds)) {
    if (isProjectId(id)) all.push(...(await listProject(st, id)));
  }
  return all.sort(byTime);
}

/** Description first: from then on it is not a cache, whatever is left. */
export async function removeSaved(st: StoredCacheState, s: Saved): Promise<void> {
  await st.blobs.delete(metaKey(s));
  await st.blobs.delete(archiveKey(s));
}

/** The newest cache of each lane folder, newest first. */
export function newestPerFolder(saved: Saved[]): Saved[] {
  const newest = new Map<string, Saved>();
  for (const s of saved) newest.set(s.folder, s);
  return [...newest.values()].sort(byTime).reverse();
}

/** Removes `saved` oldest first until they fit `maxBytes` (never `keep`); returns how many went. */
export async function evictUntil(
  st: StoredCacheState,
  saved: readonly Saved[],
  maxBytes: number,
  keep: string,
): Promise<number> {
  let total = saved.reduce((n, s) => n + s.bytes, 0);
  let evicted = 0;
  for (const s of saved) {
    if (total <= maxBytes) break;
    if (s.name === keep) continue;
    await removeSaved(st, s);
    total -= s.bytes;
    evicted++;
  }
  return evicted;
}
