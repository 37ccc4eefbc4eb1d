import { hashKey } from '../../../../platform/storage/blob-store.ts';
import { firstRules } from './rules.ts';
import type { ReaderState } from './state.ts';
import type { ArtifactReader } from './types.ts';

/** Artifact ids are `art_` and lowercase alphanumerics; anything else is not looked for. */
const SAFE_ID = /^[a-z0-9_-]{1,128}$/;

/**
 * The reader's interface over its state (createArtifactReader makes both). What a request asks
 * is answered here, not behind one more call.
 */
export function readerOf(s: ReaderState): ArtifactReader {
  const { files, cache } = s;
  return {
    root: files.store.location,
    files,
    ensureBlob: (hash) => files.ensure(hashKey('blobs', hash)),
    async manifest(artifactId) {
      // The id comes from the database, but it still becomes a file name: refuse anything odd.
      if (!SAFE_ID.test(artifactId)) return null;
      return (await cache.fetch(artifactId)) ?? null;
    },
    peek(artifactId) {
      // Undefined while a read is under way.
      return cache.get(artifactId);
    },
    blobPath: (hash) => files.path(hashKey('blobs', hash)),
    routingRules(manifest, folder) {
      const byFolder = s.rulesOf.get(manifest);
      const known = byFolder?.get(folder);
      if (known) return known;
      return firstRules(s, manifest, folder, byFolder);
    },
  };
}
