import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../config.ts';
import { findEncryptionKey, KEY_FILE } from '../lib/secrets.ts';
import { BACKED_UP, copyArtifacts } from './artifacts-copy.ts';
import { snapshotDatabase } from './database-snapshot.ts';
import { keyFingerprint, writeManifest, type BackupManifest } from './manifest.ts';

export interface BackupOptions {
  /** The folder backups go into; each backup is a new folder in it. */
  dest: string;
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
 * changed after). Made in `<name>.partial` and renamed when whole, so a crash never leaves
 * something that looks like a backup.
 */
export async function createBackup(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'artifactsDir' | 'encryptionKey'>,
  opts: BackupOptions,
): Promise<{ dir: string; manifest: BackupManifest; removed: string[] }> {
  const key = findEncryptionKey(config.encryptionKey, config.dataDir);
  if (!key) {
    throw new Error(
      `No encryption key found (SLIPWAY_ENCRYPTION_KEY, or ${join(config.dataDir, KEY_FILE)}): run backup with the service's environment`,
    );
  }
  const dest = resolve(opts.dest);
  const name = folderName(opts.now);
  const dir = join(dest, name);
  const partial = `${dir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true, mode: 0o700 });
  try {
    opts.say(`Backing up the ${config.databaseUrl ? 'PostgreSQL' : 'SQLite'} database…`);
    const database = await snapshotDatabase(config, partial);
    opts.say(`Copying artifacts from ${config.artifactsDir}…`);
    const copied = await copyArtifacts(config.artifactsDir, partial);
    if (opts.includeKey) {
      await writeFile(join(partial, KEY_FILE), `${key.toString('base64')}\n`, { mode: 0o600 });
    }
    const manifest: BackupManifest = {
      format: 1,
      createdAt: opts.now.toISOString(),
      database,
      keyFingerprint: keyFingerprint(key),
      keyIncluded: opts.includeKey,
      artifacts: [...BACKED_UP],
      files: copied.files,
      bytes: copied.bytes,
    };
    await writeManifest(partial, manifest);
    await rename(partial, dir);
    const removed = opts.keep === undefined ? [] : await prune(dest, opts.keep);
    return { dir, manifest, removed };
  } catch (err) {
    await rm(partial, { recursive: true, force: true });
    throw err;
  }
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
