import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { randomString } from '../../../core/ids.ts';
import { hashKey, type BlobStore } from '../../../platform/storage/blob-store.ts';
import { collect } from './collect.ts';
import { manifestKey, type ArtifactManifest, type ManifestFile } from './manifest.ts';
import type { Entry, StoredArtifact, StoreLimits, Tree } from './types.ts';

/** What one artifact store keeps (createArtifactStore makes it once), passed to storeTrees. */
export interface ArtifactState {
  blobs: BlobStore;
  now: () => Date;
  /** Told the blob keys of an artifact before any is looked for (ArtifactStoreOptions.beforeBlobs). */
  beforeBlobs: ((keys: string[]) => Promise<void>) | undefined;
}

/** Files hashed and copied at once. */
export const PARALLEL = 8;

async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Runs `fn` over `items` with at most `limit` running at once. */
export async function forEachLimited<T>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Stores the folders' files as blobs, then the manifest naming them. */
export async function storeTrees(
  s: ArtifactState,
  trees: readonly Tree[],
  limits: StoreLimits,
): Promise<StoredArtifact> {
  const { entries, links } = await collect(trees, limits);
  const { files, hashes } = await hashEntries(entries);
  // Before any blob is looked for: one a collection was about to remove is then written again.
  await s.beforeBlobs?.([...new Set(hashes.values())].map((h) => hashKey('blobs', h)));
  await forEachLimited(entries, PARALLEL, async (entry) => {
    // Two builds storing the same new blob at once both write the same bytes: either wins.
    await s.blobs.putIfAbsent(hashKey('blobs', hashes.get(entry)!), { file: entry.absolute });
  });

  return writeManifest(s, files, links);
}

/** Writes the manifest of blobs already stored (last: a manifest that can be read names only those). */
export async function writeManifest(
  s: ArtifactState,
  files: Record<string, ManifestFile>,
  links: Record<string, string>,
): Promise<StoredArtifact> {
  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const all = Object.values(sorted);
  const totalBytes = all.reduce((sum, f) => sum + f.size, 0);
  const manifest: ArtifactManifest = {
    id: `art_${randomString(20)}`,
    createdAt: s.now().toISOString(),
    totalBytes,
    files: sorted,
    ...(Object.keys(links).length ? { links } : {}),
  };
  await s.blobs.putIfAbsent(manifestKey(manifest.id), { bytes: JSON.stringify(manifest) });
  return {
    artifactId: manifest.id,
    fileCount: all.length,
    totalBytes,
    linkCount: Object.keys(links).length,
  };
}

/** Each file's manifest entry and content hash. */
async function hashEntries(
  entries: Entry[],
): Promise<{ files: Record<string, ManifestFile>; hashes: Map<Entry, string> }> {
  const files: Record<string, ManifestFile> = {};
  const hashes = new Map<Entry, string>();
  await forEachLimited(entries, PARALLEL, async (entry) => {
    const hash = await hashFile(entry.absolute);
    hashes.set(entry, hash);
    files[entry.sitePath] = entry.executable
      ? { hash, size: entry.size, executable: true }
      : { hash, size: entry.size };
  });
  return { files, hashes };
}
