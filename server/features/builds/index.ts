/**
 * The public entry of the builds feature: the builder, the build job, artifacts and build caches.
 * The rest of the service imports these, never another file of the folder
 * (docs/architecture.md#features).
 */
export { ArtifactManifest, ManifestFile, createArtifactStore, linkInside, manifestKey } from './artifacts.ts';
export { createBuildJob } from './job/build-job.ts';
export { collectStorageNow } from './job/collect-storage.ts';
export { buildCacheStoreOf } from './open-build-cache.ts';
