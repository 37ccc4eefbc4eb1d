import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type LaneKind, laneKind } from '../../../platform/store/cache-lanes.ts';
import { isProjectId, type OrganizationCacheQuota } from '../cache-store-interface.ts';
import { type Described, type LocalCacheState, projectDir, readMeta, scratch, STALE_MS } from './state.ts';

const bySavedAt = (a: Described, b: Described) =>
  a.savedAt < b.savedAt ? -1 : a.savedAt > b.savedAt ? 1 : 0;

/** The description goes first: from then on the folder is not a cache, whatever is left. */
export async function remove(base: string): Promise<void> {
  await rm(`${base}.json`, { force: true });
  const old = scratch(base, 'old');
  if (
    await rename(base, old).then(
      () => true,
      () => false,
    )
  )
    await rm(old, { recursive: true, force: true });
}

/** The project's caches by their descriptions, oldest first. */
export async function described(st: LocalCacheState, projectId: string): Promise<Described[]> {
  const pdir = projectDir(st, projectId);
  const names = await readdir(pdir).catch(() => [] as string[]);
  const entries: Described[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const meta = await readMeta(join(pdir, name));
    if (meta) entries.push({ ...meta, base: join(pdir, name.slice(0, -'.json'.length)) });
  }
  return entries.sort(bySavedAt);
}

/** The caches of these projects, oldest first. */
export async function describedAll(st: LocalCacheState, projectIds: readonly string[]): Promise<Described[]> {
  const entries: Described[] = [];
  for (const id of new Set(projectIds)) {
    if (isProjectId(id)) entries.push(...(await described(st, id)));
  }
  return entries.sort(bySavedAt);
}

/** The lanes of a kind that have a cache, newest first. */
export async function newestOf(st: LocalCacheState, projectId: string, kind: LaneKind): Promise<string[]> {
  return (await described(st, projectId))
    .flatMap((e) => (e.lane && laneKind(e.lane) === kind ? [e.lane] : []))
    .reverse();
}

/** Leftovers of saves and removals that did not finish, once surely abandoned. */
async function removeStale(st: LocalCacheState, projectId: string): Promise<void> {
  const pdir = projectDir(st, projectId);
  for (const name of await readdir(pdir).catch(() => [] as string[])) {
    if (!/\.(tmp|old)$/.test(name)) continue;
    const at = join(pdir, name);
    const age = await stat(at).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > STALE_MS) await rm(at, { recursive: true, force: true });
  }
}

/** Oldest first until the project's caches fit the cap; returns how many went. */
export async function evict(st: LocalCacheState, projectId: string): Promise<number> {
  await removeStale(st, projectId);
  const entries = await described(st, projectId);
  let total = entries.reduce((n, e) => n + e.bytes, 0);
  let evicted = 0;
  while (total > st.maxBytesPerProject && entries.length > 1) {
    const oldest = entries.shift()!;
    await remove(oldest.base);
    total -= oldest.bytes;
    evicted++;
  }
  return evicted;
}

/**
 * Oldest first, across the organization's projects, until their caches fit its quota; `keep`
 * (the cache just saved) never goes. Returns how many went.
 */
export async function evictForOrganization(
  st: LocalCacheState,
  quota: OrganizationCacheQuota,
  keep: string,
): Promise<number> {
  const entries = await describedAll(st, quota.projectIds);
  let total = entries.reduce((n, e) => n + e.bytes, 0);
  let evicted = 0;
  for (const oldest of entries) {
    if (total <= quota.maxBytes) break;
    if (oldest.base === keep) continue;
    await remove(oldest.base);
    total -= oldest.bytes;
    evicted++;
  }
  return evicted;
}
