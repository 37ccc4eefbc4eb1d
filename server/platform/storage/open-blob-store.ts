import type { Config } from '../config.ts';
import type { BlobStore } from './blob-store.ts';
import { createLocalBlobStore } from './local-blob-store.ts';
import { createS3BlobStore } from './s3-blob-store.ts';

const opened = new WeakMap<object, BlobStore>();

/**
 * The service's blob store: the bucket SLIPWAY_OBJECT_STORAGE names, else the artifacts
 * directory. One per configuration, shared by everything that reads or writes it.
 */
export function blobStoreOf(config: Pick<Config, 'artifactsDir' | 'objectStorage'>): BlobStore {
  let store = opened.get(config);
  if (!store) {
    store = config.objectStorage
      ? createS3BlobStore(config.objectStorage)
      : createLocalBlobStore(config.artifactsDir);
    opened.set(config, store);
  }
  return store;
}
