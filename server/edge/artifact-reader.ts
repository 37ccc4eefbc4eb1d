import { LRUCache } from 'lru-cache';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ArtifactManifest as Manifest } from '../builder/artifacts.ts';

/** The builder writes the format (server/builder/artifacts.ts); the edge reads the same schema. */
export { ManifestFile, ArtifactManifest as Manifest } from '../builder/artifacts.ts';

export interface ArtifactReader {
  root: string;
  /** The manifest, or null when the artifact does not exist. Cached: manifests are immutable. */
  manifest(artifactId: string): Promise<Manifest | null>;
  /** The manifest when it is already loaded (the edge's synchronous fast path), else undefined. */
  peek(artifactId: string): Manifest | undefined;
  /** Path of a blob on disk. */
  blobPath(hash: string): string;
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Reads artifacts in the builder's on-disk format; keeps up to `maxManifests` parsed manifests,
 * the least recently used out first. Concurrent requests for one manifest share its read.
 */
export function createArtifactReader(root: string, opts: { maxManifests?: number } = {}): ArtifactReader {
  const cache = new LRUCache<string, Manifest>({
    max: opts.maxManifests ?? 500,
    // A missing artifact (undefined) may appear later (the builder is still writing it), and a
    // failed read must not stick: only manifests that loaded are kept.
    fetchMethod: async (artifactId) => {
      let text: string;
      try {
        text = await readFile(join(root, 'manifests', `${artifactId}.json`), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
      return Manifest.parse(JSON.parse(text));
    },
  });

  return {
    root,
    async manifest(artifactId) {
      // The id comes from the database, but it still becomes a file name: refuse anything odd.
      if (!SAFE_ID.test(artifactId)) return null;
      return (await cache.fetch(artifactId)) ?? null;
    },
    peek(artifactId) {
      // Undefined while a read is under way.
      return cache.get(artifactId);
    },
    blobPath(hash) {
      return join(root, 'blobs', hash.slice(0, 2), hash);
    },
  };
}
