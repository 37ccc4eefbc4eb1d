import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { extract as unpackTar } from 'tar';
import { type CacheEntry, TOUCH_EVERY_MS } from '../build-cache-store.ts';
import { laneKind } from '../../../platform/store/cache-lanes.ts';
import { pruneLocal } from './prune-local.ts';
import { archiveKey, type Meta, metaKey, parseMeta, readMeta, type Saved } from './saved.ts';
import { hold, localProject, type StoredCacheState, unhold } from './state.ts';

/**
 * The cache on this machine's disk, unpacked from the store the first time (once however
 * many builds ask together); null when it is gone from the store, or names another lane.
 */
export async function materialize(
  st: StoredCacheState,
  s: Saved,
  lane: string | null,
): Promise<CacheEntry | null> {
  const id = `${s.projectId}/${s.name}`;
  // Held before anything is looked at, in the same turn as the check on a removal: a prune
  // either saw the hold and skips the copy, or had begun removing it, and the copy is then
  // fetched again once the removal is done.
  hold(st, id);
  let entry: CacheEntry | null = null;
  try {
    await st.copies.removing.get(id);
    let p = st.pending.get(id);
    if (!p) {
      p = unpack(st, s, lane).finally(() => st.pending.delete(id));
      st.pending.set(id, p);
    }
    entry = await p;
  } finally {
    if (!entry) unhold(st, id);
  }
  if (!entry) return null;
  let released = false;
  return {
    ...entry,
    release: () => {
      if (released) return;
      released = true;
      unhold(st, id);
    },
  };
}

/** Whether a description is of the lane asked for (or, with none asked, of the folder's kind). */
const otherLane = (meta: Meta, s: Saved, lane: string | null) =>
  lane !== null ? meta.lane !== lane : laneKind(meta.lane) !== s.kind;

async function unpack(st: StoredCacheState, s: Saved, lane: string | null): Promise<CacheEntry | null> {
  const dir = join(localProject(st, s.projectId), s.name);
  const localMeta = `${dir}.json`;
  let meta = await readMeta(localMeta);
  if (!meta) {
    meta = await download(st, s, lane, dir);
    if (!meta) return null;
  } else if (otherLane(meta, s, lane)) {
    return null;
  }
  const now = new Date();
  await utimes(localMeta, now, now).catch(() => undefined);
  if (Date.now() - s.usedAt.getTime() > TOUCH_EVERY_MS) await st.blobs.touch(metaKey(s));
  return { dir, trees: meta.trees, bytes: meta.bytes, lane: meta.lane, key: meta.key, id: s.name };
}

/** Fetches a cache from the store into `dir` (aside, then renamed) and its description beside it. */
async function download(
  st: StoredCacheState,
  s: Saved,
  lane: string | null,
  dir: string,
): Promise<Meta | null> {
  const bytes = await st.blobs.read(metaKey(s));
  const meta = bytes ? parseMeta(bytes.toString('utf8')) : null;
  if (!meta) return null;
  if (otherLane(meta, s, lane)) return null;
  const body = await st.blobs.stream(archiveKey(s));
  if (!body) return null;
  await mkdir(localProject(st, s.projectId), { recursive: true });
  const temp = `${dir}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(temp, { mode: 0o755 });
    await pipeline(body, createWriteStream(`${temp}.tar.gz`));
    // The owner is this process, whoever owned the files when they were packed.
    await unpackTar({ file: `${temp}.tar.gz`, cwd: temp, preserveOwner: false, strict: true });
    await rm(dir, { recursive: true, force: true });
    await rename(temp, dir);
  } finally {
    await rm(temp, { recursive: true, force: true });
    await rm(`${temp}.tar.gz`, { force: true });
  }
  const localMeta = `${dir}.json`;
  await writeFile(`${localMeta}.tmp`, JSON.stringify(meta));
  await rename(`${localMeta}.tmp`, localMeta);
  // A new copy on this disk: the least recently used go if the copies are now over the bound.
  await pruneLocal(st);
  return meta;
}
