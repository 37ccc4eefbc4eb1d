export { ArtifactManifest, ManifestFile, createArtifactStore, linkInside, manifestKey } from './artifacts.ts';
export { createBuildJob } from './job/build-job.ts';
export { collectStorageNow } from './job/collect-storage.ts';
export { buildCacheStoreOf } from './open-build-cache.ts';
