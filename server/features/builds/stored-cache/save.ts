import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create as packTar } from 'tar';
import type { OrganizationCacheQuota, SaveResult } from '../build-cache-store.ts';
import { laneKind } from '../../../platform/store/cache-lanes.ts';
import { totalOf, type TreeCounts } from '../link-tree.ts';
import { evictUntil, listProject, listProjects, removeSaved } from './listing.ts';
import { pruneLocal } from './prune-local.ts';
import { archiveKey, byTime, folderOf, keyHash, type Meta, metaKey, type Saved } from './saved.ts';
import { hold, localProject, type StoredCacheState, unhold } from './state.ts';

/** BuildCacheStore.save: a new archive and description in the store, and a copy on this disk. */
export async function saveCache(
  st: StoredCacheState,
  projectId: string,
  lane: string,
  key: string,
  maxBytes: number,
  fill: (dir: string) => Promise<TreeCounts>,
  organization?: OrganizationCacheQuota,
): Promise<SaveResult> {
  const pdir = localProject(st, projectId);
  await mkdir(pdir, { recursive: true });
  const temp = join(pdir, `${randomBytes(6).toString('hex')}.tmp`);
  const archive = `${temp}.tar.gz`;
  try {
    await mkdir(temp, { mode: 0o755 });
    const trees: TreeCounts = await fill(temp);
    const { bytes } = totalOf(trees);
    if (bytes > maxBytes) return { saved: false, bytes };
    if (organization && bytes > organization.maxBytes) return { saved: false, bytes, over: 'organization' };
    const s = newSaved(projectId, lane, key, bytes);
    const meta: Meta = { lane, key, trees, bytes, savedAt: new Date(s.savedAt).toISOString() };
    await upload(st, s, meta, temp, archive);
    await keepLocalCopy(st, s, meta, temp);
    await pruneLocal(st);
    // The lane's older caches go: its newest is its cache.
    for (const old of await listProject(st, projectId)) {
      if (old.folder === s.folder && byTime(old, s) < 0) await removeSaved(st, old);
    }
    const evicted = await evictUntil(
      st,
      await listProject(st, projectId),
      st.opts.maxBytesPerProject,
      s.name,
    );
    if (!organization) return { saved: true, bytes, evicted };
    const all = await listProjects(st, organization.projectIds);
    const quotaEvicted = await evictUntil(st, all, organization.maxBytes, s.name);
    return { saved: true, bytes, evicted, quotaEvicted };
  } finally {
    await rm(temp, { recursive: true, force: true });
    await rm(archive, { force: true });
  }
}

/** A new cache's name: saved now, with its size and key. */
function newSaved(projectId: string, lane: string, key: string, bytes: number): Saved {
  const savedAt = Date.now();
  return {
    projectId,
    folder: folderOf(lane),
    kind: laneKind(lane) ?? 'other',
    name: `${String(savedAt).padStart(15, '0')}-${bytes}-${keyHash(key)}-${randomBytes(6).toString('hex')}`,
    savedAt,
    bytes,
    keyHash: keyHash(key),
    usedAt: new Date(savedAt),
  };
}

/** The archive, then its description: a cache that can be found is whole. */
async function upload(
  st: StoredCacheState,
  s: Saved,
  meta: Meta,
  temp: string,
  archive: string,
): Promise<void> {
  // Hard links are kept as links (pnpm's store), symbolic links as links, modes exactly as
  // they are (not `portable`, which would give the owner write access to the read-only files).
  await packTar({ cwd: temp, gzip: st.gzip, file: archive }, await readdir(temp));
  await st.blobs.putIfAbsent(archiveKey(s), { file: archive });
  await st.blobs.putIfAbsent(metaKey(s), { bytes: JSON.stringify(meta) });
}

/** This worker's next build of the lane starts from its own disk. */
async function keepLocalCopy(st: StoredCacheState, s: Saved, meta: Meta, temp: string): Promise<void> {
  const dir = join(localProject(st, s.projectId), s.name);
  const id = `${s.projectId}/${s.name}`;
  hold(st, id);
  try {
    await rename(temp, dir);
    await writeFile(`${dir}.json`, JSON.stringify(meta));
  } finally {
    unhold(st, id);
  }
}
