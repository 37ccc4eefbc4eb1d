import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import pLimit from 'p-limit';
import type { BlobStore } from '../../platform/storage/blob-store.ts';
import { type ObjectStorageEnv, parseS3Url } from '../../platform/storage/object-storage-url.ts';
import { createS3BlobStore } from '../../platform/storage/s3-blob-store.ts';

/** Objects sent or fetched at once. */
const PARALLEL = 8;

export const isS3Url = (where: string) => where.startsWith('s3://');

/** A bucket and prefix that backups go into, or one backup in it. */
export interface BackupBucket {
  /** Keys relative to the URL's prefix. */
  store: BlobStore;
  /** The URL of a folder under the prefix, with the given URL's options (`?endpoint=...`). */
  urlOf(name: string): string;
}

/**
 * The bucket of an `s3://BUCKET/PREFIX[?endpoint=URL&region=NAME]` URL (SLIPWAY_OBJECT_STORAGE's
 * syntax), with the usual AWS variables for credentials, else the object storage's own.
 */
export function openBackupBucket(url: string, env: ObjectStorageEnv): BackupBucket {
  const cfg = parseS3Url(url, env, { name: 'The backup URL', credentials: 'aws', anyCase: true });
  if (typeof cfg === 'string') throw new Error(cfg);
  const parsed = new URL(url);
  const base = `s3://${parsed.hostname}${parsed.pathname.replace(/\/+$/, '')}`;
  return {
    store: createS3BlobStore(cfg, { anyCase: true }),
    urlOf: (name) => `${base}/${name}${parsed.search}`,
  };
}

/** Not there yet: a file being written aside (`.<name>.tmp`). */
const unfinished = (name: string) => name.startsWith('.') && name.endsWith('.tmp');

/** Sends every file under `from` to `<to>/<its path>`; returns what it sent. */
export async function uploadTree(
  from: string,
  store: BlobStore,
  to: string,
): Promise<{ files: number; bytes: number }> {
  const files: { path: string; key: string }[] = [];
  const walk = async (dir: string, key: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    for (const e of entries) {
      if (unfinished(e.name)) continue;
      if (e.isDirectory()) await walk(join(dir, e.name), `${key}/${e.name}`);
      else if (e.isFile()) files.push({ path: join(dir, e.name), key: `${key}/${e.name}` });
    }
  };
  await walk(from, to);
  const limit = pLimit(PARALLEL);
  let bytes = 0;
  await Promise.all(
    files.map((f) =>
      limit(async () => {
        bytes += (await stat(f.path)).size;
        await store.putIfAbsent(f.key, { file: f.path });
      }),
    ),
  );
  return { files: files.length, bytes };
}

/** Fetches every object under `from/` into `to`, each written aside and renamed into place. */
export async function downloadTree(store: BlobStore, from: string, to: string): Promise<number> {
  const keys: string[] = [];
  for await (const o of store.list(`${from}/`)) keys.push(o.key);
  const limit = pLimit(PARALLEL);
  await Promise.all(
    keys.map((key) => limit(() => download(store, key, join(to, key.slice(from.length + 1))))),
  );
  return keys.length;
}

/** Fetches one object into `to`; an error naming it when it is not there. */
export async function download(store: BlobStore, key: string, to: string): Promise<void> {
  const body = await store.stream(key);
  if (!body) throw new Error(`${key} is missing from the backup: it is damaged`);
  await mkdir(dirname(to), { recursive: true });
  await pipeline(body, createWriteStream(`${to}.part`, { mode: 0o600 }));
  await rename(`${to}.part`, to);
}

/** The backup folders under the prefix: complete ones (with a manifest) and the others. */
async function folders(
  store: BlobStore,
  prefix: string,
): Promise<Map<string, { keys: string[]; whole: boolean }>> {
  const found = new Map<string, { keys: string[]; whole: boolean }>();
  for await (const o of store.list(prefix)) {
    const slash = o.key.indexOf('/');
    if (slash < 0) continue;
    const name = o.key.slice(0, slash);
    const f = found.get(name) ?? { keys: [], whole: false };
    f.keys.push(o.key);
    if (o.key === `${name}/manifest.json`) f.whole = true;
    found.set(name, f);
  }
  return found;
}

/**
 * Removes all but the `keep` newest complete backups under the prefix (names that start with
 * `prefix`), and folders without a manifest older than the newest complete one (a backup that
 * stopped half-way). Returns the names of the complete ones removed.
 */
export async function pruneBucket(store: BlobStore, prefix: string, keep: number): Promise<string[]> {
  const all = await folders(store, prefix);
  const whole = [...all].filter(([, f]) => f.whole).map(([n]) => n);
  whole.sort().reverse();
  const newest = whole[0];
  const old = whole.slice(keep);
  const abandoned = [...all]
    .filter(([n, f]) => !f.whole && newest !== undefined && n < newest)
    .map(([n]) => n);
  for (const name of [...old, ...abandoned]) {
    // The manifest first: from then on it is not a backup, whatever is left.
    const keys = all
      .get(name)!
      .keys.sort((a, b) => Number(b.endsWith('/manifest.json')) - Number(a.endsWith('/manifest.json')));
    for (const key of keys) await store.delete(key);
  }
  return old;
}
