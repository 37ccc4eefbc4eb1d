import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import type { OrganizationCacheQuota, SaveResult } from '../cache-store-interface.ts';
import { totalOf, type TreeCounts } from '../link-tree.ts';
import { evict, evictForOrganization, remove } from './listing.ts';
import { type LocalCacheState, type Meta, paths, projectDir, scratch } from './state.ts';

/** BuildCacheStore.save: filled aside, then in place of the lane's cache, then the caps. */
export async function saveCache(
  st: LocalCacheState,
  projectId: string,
  lane: string,
  key: string,
  maxBytes: number,
  fill: (dir: string) => Promise<TreeCounts>,
  organization?: OrganizationCacheQuota,
): Promise<SaveResult> {
  const p = paths(st, projectId, lane);
  await mkdir(projectDir(st, projectId), { recursive: true });
  const temp = scratch(p.tree, 'tmp');
  try {
    await mkdir(temp, { mode: 0o755 });
    const trees = await fill(temp);
    const { bytes } = totalOf(trees);
    if (bytes > maxBytes) return { saved: false, bytes };
    if (organization && bytes > organization.maxBytes) return { saved: false, bytes, over: 'organization' };
    await remove(p.tree);
    await rename(temp, p.tree);
    const meta: Meta = { lane, key, trees, bytes, savedAt: new Date().toISOString() };
    await writeFile(`${p.meta}.tmp`, JSON.stringify(meta));
    await rename(`${p.meta}.tmp`, p.meta);
    const evicted = await evict(st, projectId);
    if (!organization) return { saved: true, bytes, evicted };
    return {
      saved: true,
      bytes,
      evicted,
      quotaEvicted: await evictForOrganization(st, organization, p.tree),
    };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
