import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isProjectId } from '../build-cache-store.ts';
import { ABANDONED_MS, readMeta } from './saved.ts';
import type { StoredCacheState } from './state.ts';

/** A copy on this machine's disk: its folder (`base`) and description (`base.json`). */
interface LocalCopy {
  id: string;
  base: string;
  bytes: number;
  usedAt: number;
}

/**
 * Keeps this machine's copies within `localMaxBytes`: the least recently used (the modified
 * time of the copy's `.json`, moved by each restore) are removed first, the description first
 * (from then on it is not a copy), and never one a build of this process holds: a build links
 * and copies from its copy until it ends, and its save takes the downloads from it. Leftovers of
 * an unpack or save that did not finish (a crash) go once surely abandoned.
 */
export function pruneLocal(st: StoredCacheState): Promise<void> {
  // A copy that cannot be removed now is tried again by the next prune: a restore or a save
  // never fails for it.
  const run = st.copies.pruning.then(() => pruneLocalNow(st)).catch(() => undefined);
  st.copies.pruning = run;
  return run;
}

async function pruneLocalNow(st: StoredCacheState): Promise<void> {
  const found: LocalCopy[] = [];
  for (const project of await readdir(st.opts.localDir).catch(() => [] as string[])) {
    if (!isProjectId(project)) continue;
    found.push(...(await scanProject(st, project)));
  }
  const max = st.opts.localMaxBytes;
  if (max === undefined) return;
  await removeLeastUsed(st, found, max);
}

/** A project's copies on this disk; what an unpack or save left behind and is surely abandoned goes. */
async function scanProject(st: StoredCacheState, project: string): Promise<LocalCopy[]> {
  const found: LocalCopy[] = [];
  const pdir = join(st.opts.localDir, project);
  const names = await readdir(pdir).catch(() => [] as string[]);
  for (const name of names) {
    const at = join(pdir, name);
    const id = `${project}/${name.replace(/\.json$/, '')}`;
    if (name.endsWith('.json')) {
      const info = await stat(at).catch(() => null);
      const meta = info && (await readMeta(at));
      if (info && meta)
        found.push({ id, base: at.slice(0, -'.json'.length), bytes: meta.bytes, usedAt: info.mtimeMs });
      continue;
    }
    // A folder without its description, or a temporary file: left by a save or an unpack
    // that stopped (one under way holds its name, or is younger than an hour).
    if (names.includes(`${name}.json`) || st.copies.held.has(id)) continue;
    const age = await stat(at).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > ABANDONED_MS) await rm(at, { recursive: true, force: true });
  }
  return found;
}

/** Removes the least recently used copies no build holds until those left fit `max`. */
async function removeLeastUsed(st: StoredCacheState, found: LocalCopy[], max: number): Promise<void> {
  let total = found.reduce((n, c) => n + c.bytes, 0);
  for (const c of found.sort((a, b) => a.usedAt - b.usedAt)) {
    if (total <= max) break;
    if (st.copies.held.has(c.id)) continue;
    const removal = (async () => {
      await rm(`${c.base}.json`, { force: true });
      await rm(c.base, { recursive: true, force: true });
    })();
    st.copies.removing.set(c.id, removal);
    try {
      await removal;
    } finally {
      st.copies.removing.delete(c.id);
    }
    total -= c.bytes;
  }
}
