import type { BlobStore } from './blob-store.ts';
import type { ObjectStorageConfig } from './object-storage-url.ts';
import { head, list, putIfAbsent, read, remove, stream, touch } from './s3/objects.ts';
import { createS3State } from './s3/state.ts';

export { ObjectStorageError } from './s3/send.ts';
export { parseListing } from './s3/xml.ts';

// The store's parts, each over one S3State: s3/state.ts (the client and the keys' URLs),
// s3/send.ts (signing, retries, errors), s3/objects.ts (the BlobStore's operations) and
// s3/xml.ts (reading the store's answers).

/**
 * A blob store in an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Garage, Ceph), signed
 * with SigV4 (aws4fetch) over Node's fetch. An object appears whole or not at all (S3's PUT), so
 * a reader never sees half of one. Writes send `If-None-Match: *`, which stores that have
 * conditional writes (AWS S3, R2, MinIO) refuse with 412 when the key exists; stores that ignore
 * it (s3rver, older ones) get a HEAD first, which is enough because every key names its content
 * or a fresh id: a second writer of a key writes the same bytes.
 */
export function createS3BlobStore(cfg: ObjectStorageConfig, opts: { anyCase?: boolean } = {}): BlobStore {
  const s = createS3State(cfg, opts);
  return {
    location: cfg.url,
    putIfAbsent: (key, body) => putIfAbsent(s, key, body),
    read: (key) => read(s, key),
    stream: (key, range) => stream(s, key, range),
    head: (key) => head(s, key),
    list: (prefix) => list(s, prefix),
    delete: (key) => remove(s, key),
    touch: (key) => touch(s, key),
  };
}
