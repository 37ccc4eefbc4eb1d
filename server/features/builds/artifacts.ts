import { LRUCache } from 'lru-cache';
import { hashKey, type BlobStore } from '../../platform/storage/blob-store.ts';
import { createLocalBlobStore } from '../../platform/storage/local-blob-store.ts';
import { ArtifactManifest, manifestKey } from './artifacts/manifest.ts';
import { storeHashed } from './artifacts/store-hashed.ts';
import { storeTrees, type ArtifactState } from './artifacts/store-trees.ts';
import type { ArtifactStore } from './artifacts/types.ts';

// The store's pieces, each in a file of its own under artifacts/: the manifest's schema
// (manifest.ts), walking the output folders within the limits (collect.ts, link-inside.ts),
// storing blobs and the manifest (store-trees.ts), storing files of known hashes without
// reading them (store-hashed.ts), the interfaces (types.ts). What storing
// shares is one ArtifactState, passed along.
export { ArtifactManifest, ManifestFile, manifestKey } from './artifacts/manifest.ts';
export { linkInside } from './artifacts/link-inside.ts';
export type {
  ArtifactStore,
  BlobSource,
  HashedFile,
  StoredArtifact,
  StoreLimits,
} from './artifacts/types.ts';

const ARTIFACT_ID = /^art_[a-z0-9]{20}$/;
const HASH = /^[0-9a-f]{64}$/;
/** Manifests kept in memory; a manifest with node_modules can hold tens of thousands of entries. */
const CACHE_SIZE = 256;

/**
 * A content-addressed store in a blob store: a local directory (a shared volume when several
 * machines build and serve) or object storage. A blob is written once, however many deployments
 * contain it, and whole (blob-store.ts), so a reader never sees half a file; the manifest last.
 */
export function createArtifactStore(
  store: BlobStore | string,
  opts: {
    now?: () => Date;
    /**
     * Told the blob keys of an artifact before any is looked for, so a storage collection
     * spares them (rescueBlobs); nothing by default.
     */
    beforeBlobs?: (keys: string[]) => Promise<void>;
  } = {},
): ArtifactStore {
  const blobs = typeof store === 'string' ? createLocalBlobStore(store) : store;
  const s: ArtifactState = { blobs, now: opts.now ?? (() => new Date()), beforeBlobs: opts.beforeBlobs };
  /** Manifests read, the least recently used out first; concurrent reads of one share the read. */
  const cache = new LRUCache<string, ArtifactManifest>({
    max: CACHE_SIZE,
    // A missing manifest (undefined) is not remembered: it may be written later.
    fetchMethod: async (id) => {
      const bytes = await blobs.read(manifestKey(id));
      if (!bytes) return undefined;
      return ArtifactManifest.parse(JSON.parse(bytes.toString('utf8')));
    },
  });

  return {
    root: blobs.location,
    blobs,
    blobPath(hash) {
      if (!HASH.test(hash)) throw new Error(`Not a sha256 hash: ${hash}`);
      if (!blobs.localPath) throw new Error(`The artifacts are in ${blobs.location}, not on this disk`);
      return blobs.localPath(hashKey('blobs', hash));
    },

    storeDirectory: (dir, limits) => storeTrees(s, [{ dir, prefix: '/' }], limits),
    storeTrees: (trees, limits) => storeTrees(s, trees, limits),
    storeHashed: (files, source, limits) => storeHashed(s, files, source, limits),

    async readManifest(id) {
      // The id reaches a file path: only the exact shape is accepted, so `../` cannot.
      if (!ARTIFACT_ID.test(id)) return null;
      return (await cache.fetch(id)) ?? null;
    },
  };
}
