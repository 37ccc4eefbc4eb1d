import { join } from 'node:path';
import type { BlobStore } from './blob-store.ts';
import {
  head,
  list,
  pathOf,
  putIfAbsent,
  read,
  remove,
  stream,
  touch,
  type LocalState,
} from './local/objects.ts';

// The store's parts, each over one LocalState: local/objects.ts (the BlobStore's operations) and
// local/files.ts (staging a file, walking a folder).

/**
 * A blob store in a local directory (SLIPWAY_ARTIFACTS_DIR; a shared volume when several
 * machines build and serve): each key is the file of that relative path. Written through a
 * temporary file in `<root>/tmp` renamed into place, so a reader never sees half a file.
 */
export function createLocalBlobStore(root: string): BlobStore {
  const st: LocalState = { root, tmpDir: join(root, 'tmp') };
  return {
    location: root,
    localPath: (key) => pathOf(st, key),
    putIfAbsent: (key, body) => putIfAbsent(st, key, body),
    read: (key) => read(st, key),
    stream: (key, range) => stream(st, key, range),
    head: (key) => head(st, key),
    list: (prefix) => list(st, prefix),
    delete: (key) => remove(st, key),
    touch: (key) => touch(st, key),
  };
}
