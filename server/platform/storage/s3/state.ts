import { AwsClient } from 'aws4fetch';
import { checkAnyCaseKey, checkKey } from '../blob-store.ts';
import type { ObjectStorageConfig } from '../object-storage-url.ts';

/**
 * What one S3 blob store keeps (createS3BlobStore makes it once), passed to the functions that
 * send its requests rather than closed over.
 */
export interface S3State {
  cfg: ObjectStorageConfig;
  client: AwsClient;
  /** The key check: checkKey, or checkAnyCaseKey for a store opened with `anyCase`. */
  check: (key: string) => string;
}

export function createS3State(cfg: ObjectStorageConfig, opts: { anyCase?: boolean }): S3State {
  const client = new AwsClient({
    accessKeyId: cfg.accessKeyId,
    secretAccessKey: cfg.secretAccessKey,
    ...(cfg.sessionToken ? { sessionToken: cfg.sessionToken } : {}),
    service: 's3',
    region: cfg.region,
    // Retried here, where a file's body can be opened again.
    retries: 0,
  });
  return { cfg, client, check: opts.anyCase ? checkAnyCaseKey : checkKey };
}

/** The URL of a key's object. */
export const urlOf = (s: S3State, key: string) => `${s.cfg.bucketUrl}${s.cfg.prefix}${s.check(key)}`;
