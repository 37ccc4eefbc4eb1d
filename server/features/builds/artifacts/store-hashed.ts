import { rm } from 'node:fs/promises';
import { FilePath } from '../../../../api/schemas/uploads.ts';
import { hashKey } from '../../../platform/storage/blob-store.ts';
import { BuildError } from '../../../platform/sandbox/build-error.ts';
import { checkLimits } from './collect.ts';
import type { ManifestFile } from './manifest.ts';
import { forEachLimited, PARALLEL, writeManifest, type ArtifactState } from './store-trees.ts';
import type { BlobSource, HashedFile, StoredArtifact, StoreLimits } from './types.ts';

/** The site path of an uploaded path, checked again by the API's rule (FilePath). */
function sitePathOf(path: string): string {
  if (!FilePath.safeParse(path).success) {
    throw new BuildError(`The uploaded path ${JSON.stringify(path)} is not a plain relative path.`);
  }
  return `/${path}`;
}

/**
 * Files whose content hash is known, stored as one artifact without reading them (see
 * ArtifactStore.storeHashed): the manifest comes from the list, and only the blobs the store
 * lacks are copied in, from `source`. A redeploy that changed one file of a thousand copies one.
 */
export async function storeHashed(
  s: ArtifactState,
  list: readonly HashedFile[],
  source: BlobSource,
  limits: Pick<StoreLimits, 'maxBytes' | 'maxFiles'>,
): Promise<StoredArtifact> {
  const files: Record<string, ManifestFile> = {};
  for (const f of list) files[sitePathOf(f.path)] = { hash: f.sha256, size: f.size };
  const all = Object.values(files);
  checkLimits(
    all.length,
    all.reduce((sum, f) => sum + f.size, 0),
    limits,
  );
  const hashes = [...new Set(all.map((f) => f.hash))];
  // Before any blob is looked for: one a collection was about to remove is then written again.
  await s.beforeBlobs?.(hashes.map((h) => hashKey('blobs', h)));
  await forEachLimited(hashes, PARALLEL, async (hash) => {
    const key = hashKey('blobs', hash);
    if (await s.blobs.head(key)) return;
    const body = await source(hash);
    if (!body) {
      throw new BuildError(
        `The uploaded file ${list.find((f) => f.sha256 === hash)!.path} (${hash.slice(0, 12)}...) is no longer stored: upload it again and redeploy.`,
      );
    }
    try {
      // Two deployments storing the same new blob at once both write the same bytes: either wins.
      await s.blobs.putIfAbsent(key, body);
    } finally {
      if (body.move) await rm(body.file, { force: true });
    }
  });
  return writeManifest(s, files, {});
}
