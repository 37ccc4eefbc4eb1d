import type { ObjectStorageConfig } from '../../platform/storage/object-storage-url.ts';

/** Where a service's artifacts live in object storage, without credentials: `<bucket URL><prefix>`. */
export const storageName = (storage: Pick<ObjectStorageConfig, 'bucketUrl' | 'prefix'>) =>
  `${storage.bucketUrl}${storage.prefix}`;
