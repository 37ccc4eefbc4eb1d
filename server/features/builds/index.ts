/**
 * The public entry of the builds feature: the builder, the build job, artifacts and build caches.
 * The rest of the service imports these (and roles.ts), never another file of the folder
 * (docs/architecture.md#features).
 */
export { buildCacheStoreOf } from './open-build-cache.ts';
