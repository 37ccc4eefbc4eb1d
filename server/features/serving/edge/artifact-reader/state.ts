import { readFile } from 'node:fs/promises';
import { LRUCache } from 'lru-cache';
import { ArtifactManifest as Manifest, manifestKey } from '../../../builds/roles.ts';
import type { LocalFiles } from '../../../../platform/storage/local-files.ts';
import type { RoutingRules } from '../../../../platform/routing/match-rules.ts';
import type { ArtifactReaderOptions } from './types.ts';

/** Default bound of the manifests kept: 64 MiB of manifest files as stored (JSON). */
export const DEFAULT_MANIFEST_CACHE_BYTES = 64 * 1024 * 1024;

/** What one reader keeps (createArtifactReader makes it once), passed to its functions. */
export interface ReaderState {
  files: LocalFiles;
  /** Each kept manifest's size as stored, its routing rules' included. */
  sizes: WeakMap<Manifest, number>;
  /** Each manifest's artifact id: its key in the cache. */
  ids: WeakMap<Manifest, string>;
  /** Routing rules by manifest, then by folder: they go when their manifest does. */
  rulesOf: WeakMap<Manifest, Map<string, RoutingRules | Promise<RoutingRules>>>;
  /** The parsed manifests, by artifact id, bounded by their size. */
  cache: LRUCache<string, Manifest>;
}

export function createReaderState(files: LocalFiles, opts: ArtifactReaderOptions): ReaderState {
  const sizes = new WeakMap<Manifest, number>();
  const ids = new WeakMap<Manifest, string>();
  const cache = new LRUCache<string, Manifest>({
    maxSize: opts.maxBytes ?? DEFAULT_MANIFEST_CACHE_BYTES,
    ...(opts.maxManifests ? { max: opts.maxManifests } : {}),
    sizeCalculation: (manifest) => Math.max(1, sizes.get(manifest) ?? 1),
    // A missing artifact (undefined) may appear later (the builder is still writing it), and a
    // failed read must not stick: only manifests that loaded are kept. Written here rather than
    // behind one more call: with more sites than fit, a request may read its manifest.
    fetchMethod: async (artifactId) => {
      const key = manifestKey(artifactId);
      const ready = files.ensure(key);
      if (ready && !(await ready)) return undefined;
      let text: string;
      try {
        text = await readFile(files.path(key), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
      const manifest = Manifest.parse(JSON.parse(text));
      sizes.set(manifest, text.length);
      ids.set(manifest, artifactId);
      return manifest;
    },
  });
  return { files, sizes, ids, rulesOf: new WeakMap(), cache };
}
