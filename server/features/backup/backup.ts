import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../../platform/config.ts';
import { findEncryptionKey, KEY_FILE } from '../../core/secrets.ts';
import type { ObjectStorageEnv } from '../../platform/storage/object-storage-url.ts';
import { BACKED_UP, copyArtifacts } from './artifacts-copy.ts';
import { isS3Url, openBackupBucket, pruneBucket, uploadTree } from './backup-bucket.ts';
import { snapshotDatabase } from './database-snapshot.ts';
import { storageName } from './storage-name.ts';
import { keyFingerprint, MANIFEST_FILE, writeManifest, type BackupManifest } from './manifest.ts';

export interface BackupOptions {
  /**
   * The folder backups go into, or an `s3://BUCKET/PREFIX[?endpoint=URL&region=NAME]` URL; each
   * backup is a new folder in it.
   */
  dest: string;
  /** The credentials of an s3:// destination (AWS_ACCESS_KEY_ID...): process.env by default. */
  env?: ObjectStorageEnv;
  /** Put the encryption key in the backup too (off by default: keep it apart). */
  includeKey: boolean;
  /** Keep this many newest backups in `dest`, removing older ones; undefined keeps all. */
  keep: number | undefined;
  now: Date;
  say: (line: string) => void;
}

const PREFIX = 'slipway-backup-';

/** `slipway-backup-20261126T201500Z`: sorts by time. */
const folderName = (now: Date) =>
  `${PREFIX}${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;

/**
 * A consistent backup while the service runs: the database first (SQLite's online backup, or
 * pg_dump), then the artifacts it refers to (written before any row points at them, and never
 * changed after). Made in `<name>.partial` and renamed when whole, or, in a bucket, with its
 * manifest sent last, so a crash never leaves something that looks like a backup.
 */
export async function createBackup(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'artifactsDir' | 'encryptionKey' | 'objectStorage'>,
  opts: BackupOptions,
): Promise<{ dir: string; manifest: BackupManifest; removed: string[] }> {
  const key = findEncryptionKey(config.encryptionKey, config.dataDir);
  if (!key) {
    throw new Error(
      `No encryption key found (SLIPWAY_ENCRYPTION_KEY, or ${join(config.dataDir, KEY_FILE)}): run backup with the service's environment`,
    );
  }
  const name = folderName(opts.now);
  const bucket = isS3Url(opts.dest)
    ? openBackupBucket(opts.dest, opts.env ?? (process.env as ObjectStorageEnv))
    : null;
  const dest = bucket ? opts.dest : resolve(opts.dest);
  const dir = bucket ? bucket.urlOf(name) : join(dest, name);
  // Filled here, then renamed into place; for a bucket, the database's copy waits here to be sent.
  const partial = bucket
    ? await mkdirTemp(join(config.dataDir, '.backup-'))
    : await mkdirFresh(`${dir}.partial`);
  try {
    opts.say(`Backing up the ${config.databaseUrl ? 'PostgreSQL' : 'SQLite'} database…`);
    const database = await snapshotDatabase(config, partial);
    // In object storage the artifacts are already off this machine, content-addressed and never
    // rewritten: the backup names the bucket instead of copying it.
    const storage = config.objectStorage ? storageName(config.objectStorage) : null;
    if (storage) opts.say(`Artifacts live in object storage (${storage}): referenced, not copied.`);
    else opts.say(`Copying artifacts from ${config.artifactsDir}…`);
    const copied = { files: 0, bytes: 0 };
    if (!storage) {
      for (const folder of BACKED_UP) {
        const one = bucket
          ? await uploadTree(join(config.artifactsDir, folder), bucket.store, `${name}/artifacts/${folder}`)
          : await copyArtifacts(config.artifactsDir, partial, [folder]);
        copied.files += one.files;
        copied.bytes += one.bytes;
      }
    }
    if (opts.includeKey) {
      await writeFile(join(partial, KEY_FILE), `${key.toString('base64')}\n`, { mode: 0o600 });
    }
    const manifest: BackupManifest = {
      format: 1,
      createdAt: opts.now.toISOString(),
      database,
      keyFingerprint: keyFingerprint(key),
      keyIncluded: opts.includeKey,
      artifacts: storage ? [] : [...BACKED_UP],
      objectStorage: storage,
      files: copied.files,
      bytes: copied.bytes,
    };
    await writeManifest(partial, manifest);
    if (bucket) {
      opts.say(`Sending the backup to ${dir}…`);
      const staged = [database.file, ...(opts.includeKey ? [KEY_FILE] : [])];
      for (const file of staged)
        await bucket.store.putIfAbsent(`${name}/${file}`, { file: join(partial, file) });
      // Last: a folder with its manifest is a whole backup.
      await bucket.store.putIfAbsent(`${name}/${MANIFEST_FILE}`, { file: join(partial, MANIFEST_FILE) });
      await rm(partial, { recursive: true, force: true });
    } else {
      await rename(partial, dir);
    }
    const removed =
      opts.keep === undefined
        ? []
        : bucket
          ? (await pruneBucket(bucket.store, PREFIX, opts.keep)).map((n) => bucket.urlOf(n))
          : await prune(dest, opts.keep);
    return { dir, manifest, removed };
  } catch (err) {
    await rm(partial, { recursive: true, force: true });
    throw err;
  }
}

async function mkdirFresh(dir: string): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

async function mkdirTemp(prefix: string): Promise<string> {
  await mkdir(dirname(prefix), { recursive: true });
  return mkdtemp(prefix);
}

/** Removes all but the `keep` newest backups in `dest` (only folders this command made). */
async function prune(dest: string, keep: number): Promise<string[]> {
  const names = (await readdir(dest, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && e.name.startsWith(PREFIX) && !e.name.endsWith('.partial'))
    .map((e) => e.name)
    .sort()
    .reverse();
  const old = names.slice(keep);
  for (const n of old) await rm(join(dest, n), { recursive: true, force: true });
  return old.map((n) => join(dest, n));
}
