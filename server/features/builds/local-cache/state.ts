import { randomBytes } from 'node:crypto';
import { readFile, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { laneId, safeProject, TOUCH_EVERY_MS } from '../cache-store-interface.ts';

/** What is kept beside each cache folder; a folder without it is not a cache. */
export const Meta = z.object({
  /** The lane it was saved under (cache-lanes.ts). Caches from before lanes have `branch`: never restored. */
  lane: z.string().optional(),
  branch: z.string().optional(),
  key: z.string(),
  /** Each saved path's files and bytes. */
  trees: z.record(z.string(), z.object({ files: z.number(), bytes: z.number() })),
  bytes: z.number(),
  savedAt: z.string(),
});
export type Meta = z.infer<typeof Meta>;

/** A cache as its description says, with its folder (`base`; the description is `base.json`). */
export type Described = Meta & { base: string };

/** Left by a save that did not finish (a crash): removed once surely abandoned. */
export const STALE_MS = 60 * 60 * 1000;

/**
 * What one local build cache store keeps (createBuildCacheStore makes it once), passed to the
 * functions that find, save and evict rather than closed over.
 */
export interface LocalCacheState {
  /** `<dir>/<projectId>/<lane id>/` with its `.json` beside it. */
  dir: string;
  maxBytesPerProject: number;
}

export const projectDir = (st: LocalCacheState, projectId: string) => join(st.dir, safeProject(projectId));

/** A lane's cache folder and its description. */
export function paths(st: LocalCacheState, projectId: string, lane: string) {
  const base = join(projectDir(st, projectId), laneId(lane));
  return { tree: base, meta: `${base}.json` };
}

/** A name beside `base` for a folder being filled (`tmp`) or removed (`old`). */
export const scratch = (base: string, kind: 'tmp' | 'old') =>
  `${base}.${randomBytes(6).toString('hex')}.${kind}`;

export async function readMeta(file: string): Promise<Meta | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const parsed = Meta.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Moves a cache description's time to now, at most once per TOUCH_EVERY_MS. */
export async function markUsed(meta: string): Promise<void> {
  const at = await stat(meta).then(
    (s) => s.mtimeMs,
    () => null,
  );
  if (at === null || Date.now() - at < TOUCH_EVERY_MS) return;
  const now = new Date();
  await utimes(meta, now, now).catch(() => undefined);
}
