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

/** Reads artifacts in the builder's on-disk format; keeps up to `maxManifests` parsed manifests. */
export function createArtifactReader(root: string, opts: { maxManifests?: number } = {}): ArtifactReader {
  const max = opts.maxManifests ?? 500;
  const cache = new Map<string, Promise<Manifest | null>>();
  /** The manifests of `cache` that have loaded: same keys, dropped together. */
  const loaded = new Map<string, Manifest>();

  const load = async (artifactId: string): Promise<Manifest | null> => {
    let text: string;
    try {
      text = await readFile(join(root, 'manifests', `${artifactId}.json`), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return Manifest.parse(JSON.parse(text));
  };

  return {
    root,
    manifest(artifactId) {
      // The id comes from the database, but it still becomes a file name: refuse anything odd.
      if (!SAFE_ID.test(artifactId)) return Promise.resolve(null);
      const hit = cache.get(artifactId);
      if (hit) {
        // Re-insert so the map's order approximates least recently used.
        cache.delete(artifactId);
        cache.set(artifactId, hit);
        return hit;
      }
      const pending = load(artifactId);
      cache.set(artifactId, pending);
      // A missing artifact may appear later (the builder is still writing it), and a failed read
      // must not stick: only keep manifests that loaded.
      pending.then(
        (m) => {
          if (!m) cache.delete(artifactId);
          else if (cache.get(artifactId) === pending) loaded.set(artifactId, m);
        },
        () => cache.delete(artifactId),
      );
      if (cache.size > max) {
        const oldest = cache.keys().next().value!;
        cache.delete(oldest);
        loaded.delete(oldest);
      }
      return pending;
    },
    peek(artifactId) {
      return loaded.get(artifactId);
    },
    blobPath(hash) {
      return join(root, 'blobs', hash.slice(0, 2), hash);
    },
  };
}
