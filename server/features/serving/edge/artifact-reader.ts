import { LRUCache } from 'lru-cache';
import { readFile } from 'node:fs/promises';
import { ArtifactManifest as Manifest, manifestKey } from '../../builds/index.ts';
import { hashKey } from '../../../platform/storage/blob-store.ts';
import { createLocalBlobStore } from '../../../platform/storage/local-blob-store.ts';
import { localFilesOf, type LocalFiles } from '../../../platform/storage/local-files.ts';
import { loadRoutingRules, rulesFilesOf } from '../../../platform/routing/load-rules.ts';
import { NO_RULES, type RoutingRules } from '../../../platform/routing/match-rules.ts';

/** The builder writes the format (server/features/builds/artifacts.ts); the edge reads the same schema. */
export { ManifestFile, ArtifactManifest as Manifest } from '../../builds/index.ts';

export interface ArtifactReader {
  /** Where the artifacts are (a directory or an `s3://` URL). */
  root: string;
  /** Their files on this machine. */
  files: LocalFiles;
  /** The manifest, or null when the artifact does not exist. Cached: manifests are immutable. */
  manifest(artifactId: string): Promise<Manifest | null>;
  /** The manifest when it is already loaded (the edge's synchronous fast path), else undefined. */
  peek(artifactId: string): Manifest | undefined;
  /** Path of a blob on disk; see ensureBlob. */
  blobPath(hash: string): string;
  /**
   * Undefined when the blob can be read at blobPath now; else the promise of fetching it there
   * (object storage: a cold edge fetches each blob once), false when the store has none.
   */
  ensureBlob(hash: string): Promise<boolean> | undefined;
  /**
   * The routing rules (`_redirects`, `_headers`) in `folder` of a manifest's artifact (see
   * rulesFolderOf): NO_RULES at once when it has neither file; otherwise read and parsed on the
   * first call, then kept with the manifest (their size counted in its bound) and returned
   * without waiting. A failed read is not kept.
   */
  routingRules(manifest: Manifest, folder: string): RoutingRules | Promise<RoutingRules>;
}

/** Artifact ids are `art_` and lowercase alphanumerics; anything else is not looked for. */
const SAFE_ID = /^[a-z0-9_-]{1,128}$/;

/** Default bound of the manifests kept: 64 MiB of manifest files as stored (JSON). */
export const DEFAULT_MANIFEST_CACHE_BYTES = 64 * 1024 * 1024;

export interface ArtifactReaderOptions {
  /**
   * Manifests kept, by the size of their files as stored (default 64 MiB; parsed, about twice
   * that in memory): about 300,000 single-file sites, or 9,500 sites of 60 files. Counted in
   * bytes rather than manifests because a manifest may list one file or 100,000.
   */
  maxBytes?: number;
  /** And at most this many manifests (default: no bound but `maxBytes`). */
  maxManifests?: number;
}

/**
 * Reads artifacts in the builder's on-disk format; keeps parsed manifests up to `maxBytes`, the
 * least recently used out first. Concurrent requests for one manifest share its read.
 *
 * The bound must hold the manifests of every site an edge serves, not a sample of them: traffic
 * spread over more sites than fit comes round to each after the others have pushed it out, so
 * every request would read and parse its manifest again (with 500 manifests and 10,000 sites,
 * and their files past the file cache, 4 to 5 times the CPU per request: docs/performance.md,
 * edge-hosts).
 */
export function createArtifactReader(
  from: string | LocalFiles,
  opts: ArtifactReaderOptions = {},
): ArtifactReader {
  const files = typeof from === 'string' ? localFilesOf(createLocalBlobStore(from)) : from;
  /** Each kept manifest's size as stored, its routing rules' included. */
  const sizes = new WeakMap<Manifest, number>();
  /** Each manifest's artifact id: its key in the cache. */
  const ids = new WeakMap<Manifest, string>();
  /** Routing rules by manifest, then by folder: they go when their manifest does. */
  const rulesOf = new WeakMap<Manifest, Map<string, RoutingRules | Promise<RoutingRules>>>();
  const cache = new LRUCache<string, Manifest>({
    maxSize: opts.maxBytes ?? DEFAULT_MANIFEST_CACHE_BYTES,
    ...(opts.maxManifests ? { max: opts.maxManifests } : {}),
    sizeCalculation: (manifest) => Math.max(1, sizes.get(manifest) ?? 1),
    // A missing artifact (undefined) may appear later (the builder is still writing it), and a
    // failed read must not stick: only manifests that loaded are kept.
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

  const blobPath = (hash: string) => files.path(hashKey('blobs', hash));
  const ensureBlob = (hash: string) => files.ensure(hashKey('blobs', hash));
  /** A blob's bytes, fetched first when it is not on this disk. */
  const readBlob = async (hash: string) => {
    const ready = ensureBlob(hash);
    if (ready && !(await ready))
      throw Object.assign(new Error(`blob ${hash} is missing`), { code: 'ENOENT' });
    return readFile(blobPath(hash));
  };

  return {
    root: files.store.location,
    files,
    ensureBlob,
    async manifest(artifactId) {
      // The id comes from the database, but it still becomes a file name: refuse anything odd.
      if (!SAFE_ID.test(artifactId)) return null;
      return (await cache.fetch(artifactId)) ?? null;
    },
    peek(artifactId) {
      // Undefined while a read is under way.
      return cache.get(artifactId);
    },
    blobPath,
    routingRules(manifest, folder) {
      let byFolder = rulesOf.get(manifest);
      const known = byFolder?.get(folder);
      if (known) return known;
      if (!byFolder) {
        byFolder = new Map<string, RoutingRules | Promise<RoutingRules>>();
        rulesOf.set(manifest, byFolder);
      }
      const found = rulesFilesOf(manifest.files, folder);
      if (!found.redirects && !found.headers) {
        byFolder.set(folder, NO_RULES);
        return NO_RULES;
      }
      const kept = byFolder;
      const loading = loadRoutingRules(found, (file) => readBlob(file.hash)).then(
        ({ rules, bytes }) => {
          kept.set(folder, rules);
          // Counted in the manifest's size, so that the bound holds rules too.
          const id = ids.get(manifest);
          if (bytes > 0 && id !== undefined) {
            sizes.set(manifest, (sizes.get(manifest) ?? 0) + bytes);
            if (cache.peek(id) === manifest) cache.set(id, manifest);
          }
          return rules;
        },
        (err: unknown) => {
          kept.delete(folder);
          throw err;
        },
      );
      kept.set(folder, loading);
      return loading;
    },
  };
}
