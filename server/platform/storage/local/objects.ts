import { createReadStream, type ReadStream } from 'node:fs';
import { lstat, mkdir, readFile, rename, rm, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomString } from '../../../core/ids.ts';
import { checkKey, type BlobBody, type BlobInfo } from '../blob-store.ts';
import { exists, isMissing, stage, walk } from './files.ts';

/** What one local blob store keeps (createLocalBlobStore makes it once): its folders. */
export interface LocalState {
  root: string;
  /** Where files are written before they are renamed into place. */
  tmpDir: string;
}

/** The file of a key. */
export const pathOf = (st: LocalState, key: string) => join(st.root, checkKey(key));

export async function putIfAbsent(st: LocalState, key: string, body: BlobBody): Promise<boolean> {
  const dest = pathOf(st, key);
  if (await exists(dest)) return false;
  await Promise.all([mkdir(dirname(dest), { recursive: true }), mkdir(st.tmpDir, { recursive: true })]);
  const tmp = join(st.tmpDir, `${randomString(16)}.tmp`);
  try {
    await stage(tmp, body);
    // Two writers of one content-addressed key both rename a complete copy: either wins.
    await rename(tmp, dest);
    return true;
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export async function read(st: LocalState, key: string): Promise<Buffer | null> {
  return readFile(pathOf(st, key)).catch((err: unknown) => {
    if (isMissing(err)) return null;
    throw err;
  });
}

export async function stream(
  st: LocalState,
  key: string,
  range?: { start: number; end: number },
): Promise<ReadStream | null> {
  const path = pathOf(st, key);
  if (!(await exists(path))) return null;
  return createReadStream(path, range ?? {});
}

export async function head(st: LocalState, key: string): Promise<BlobInfo | null> {
  const s = await lstat(pathOf(st, key)).catch(() => null);
  return s?.isFile() ? { size: s.size, modifiedAt: s.mtime } : null;
}

export function list(st: LocalState, prefix: string): AsyncIterable<BlobInfo & { key: string }> {
  // Listed by the folder the prefix names, then filtered: `blobs/a` lists `blobs/` and keeps `blobs/a*`.
  const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
  if (folder) checkKey(folder);
  return keep(walk(folder ? join(st.root, folder) : st.root, folder), prefix);
}

/** The entries whose key starts with `prefix`, but not the temporary files. */
async function* keep(all: AsyncIterable<BlobInfo & { key: string }>, prefix: string) {
  for await (const entry of all)
    if (entry.key.startsWith(prefix) && !entry.key.startsWith('tmp/')) yield entry;
}

export async function remove(st: LocalState, key: string): Promise<void> {
  await rm(pathOf(st, key), { force: true });
}

export async function touch(st: LocalState, key: string): Promise<boolean> {
  const now = new Date();
  return utimes(pathOf(st, key), now, now).then(
    () => true,
    (err: unknown) => {
      if (isMissing(err)) return false;
      throw err;
    },
  );
}
