import { createLocalBlobStore } from '../../../platform/storage/local-blob-store.ts';
import { localFilesOf, type LocalFiles } from '../../../platform/storage/local-files.ts';
import { readerOf } from './artifact-reader/reader-of.ts';
import { createReaderState } from './artifact-reader/state.ts';
import type { ArtifactReader, ArtifactReaderOptions } from './artifact-reader/types.ts';

/** The builder writes the format (server/features/builds/artifacts.ts); the edge reads the same schema. */
export { ManifestFile, ArtifactManifest as Manifest } from '../../builds/roles.ts';
export type { ArtifactReader, ArtifactReaderOptions } from './artifact-reader/types.ts';
export { DEFAULT_MANIFEST_CACHE_BYTES } from './artifact-reader/state.ts';

/**
 * Reads artifacts in the builder's on-disk format; keeps parsed manifests up to `maxBytes`, the
 * least recently used out first. Concurrent requests for one manifest share its read.
 *
 * The bound must hold the manifests of every site an edge serves, not a sample of them: traffic
 * spread over more sites than fit comes round to each after the others have pushed it out, so
 * every request would read and parse its manifest again (with 500 manifests and 10,000 sites,
 * and their files past the file cache, 4 to 5 times the CPU per request: docs/performance.md,
 * edge-hosts).
 *
 * Its parts, in artifact-reader/: state.ts (the manifests kept, read on a miss), reader-of.ts
 * (what the edge asks), rules.ts (a folder's `_redirects` and `_headers`, read once).
 */
export function createArtifactReader(
  from: string | LocalFiles,
  opts: ArtifactReaderOptions = {},
): ArtifactReader {
  const files = typeof from === 'string' ? localFilesOf(createLocalBlobStore(from)) : from;
  return readerOf(createReaderState(files, opts));
}
