import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { isProjectId, laneId } from '../build-cache-store.ts';
import { laneKind } from '../../../platform/store/cache-lanes.ts';

/** What is stored beside each cache's archive (`<name>.json`, written after it). */
export const Meta = z.object({
  lane: z.string(),
  key: z.string(),
  trees: z.record(z.string(), z.object({ files: z.number(), bytes: z.number() })),
  bytes: z.number(),
  savedAt: z.string(),
});
export type Meta = z.infer<typeof Meta>;

/** One saved cache as its keys name it: everything a choice needs, without reading it. */
export interface Saved {
  projectId: string;
  /** `<kind>-<lane hash>`: the lane's folder. */
  folder: string;
  kind: string;
  /** `<time>-<bytes>-<key hash>-<random>`: sorts by the time it was saved. */
  name: string;
  savedAt: number;
  bytes: number;
  keyHash: string;
  /** The description's modified time: its save, or its latest restore (touch). */
  usedAt: Date;
}

export const PREFIX = 'build-cache/';
/** An archive without its description this old was left by a save that did not finish. */
export const ABANDONED_MS = 60 * 60 * 1000;
const NAME = /^(\d{15})-(\d+)-([0-9a-f]{16})-([0-9a-f]{12})$/;

export const keyHash = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 16);
export const folderOf = (lane: string) => `${laneKind(lane) ?? 'other'}-${laneId(lane)}`;
export const metaKey = (s: Pick<Saved, 'projectId' | 'folder' | 'name'>) =>
  `${PREFIX}${s.projectId}/${s.folder}/${s.name}.json`;
export const archiveKey = (s: Pick<Saved, 'projectId' | 'folder' | 'name'>) =>
  `${PREFIX}${s.projectId}/${s.folder}/${s.name}.tar.gz`;
export const byTime = (a: Saved, b: Saved) => a.savedAt - b.savedAt || (a.name < b.name ? -1 : 1);

/** The saved cache a description's key names, or null for any other key. */
export function parseKey(key: string, modifiedAt: Date): Saved | null {
  const parts = key.slice(PREFIX.length).split('/');
  if (parts.length !== 3 || !parts[2]!.endsWith('.json')) return null;
  const [projectId, folder] = parts as [string, string];
  const name = parts[2]!.slice(0, -'.json'.length);
  const m = NAME.exec(name);
  if (!m || !isProjectId(projectId)) return null;
  return {
    projectId,
    folder,
    kind: folder.slice(0, folder.indexOf('-')),
    name,
    savedAt: Number(m[1]),
    bytes: Number(m[2]),
    keyHash: m[3]!,
    usedAt: modifiedAt,
  };
}

export async function readMeta(file: string): Promise<Meta | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  return text === null ? null : parseMeta(text);
}

export function parseMeta(text: string): Meta | null {
  try {
    const parsed = Meta.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
