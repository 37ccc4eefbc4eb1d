/**
 * The builds feature's second public entry: what the process roles start: the build job and the artifact store it writes.
 * Apart from index.ts so that the API, which loads index.ts, does not load them
 * (docs/architecture.md#features).
 */
export { ArtifactManifest, ManifestFile, createArtifactStore, linkInside, manifestKey } from './artifacts.ts';
export { createBuildJob } from './job/build-job.ts';
export { collectStorageNow } from './job/collect-storage.ts';
