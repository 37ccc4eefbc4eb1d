import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ObjectStorageEnv } from '../../platform/storage/object-storage-url.ts';
import { download, downloadTree, isS3Url, openBackupBucket, type BackupBucket } from './backup-bucket.ts';
import type { Config } from '../../platform/config.ts';
import { findEncryptionKey, KEY_FILE } from '../../core/secrets.ts';
import { copyTree } from './artifacts-copy.ts';
import { restoreDatabase } from './database-snapshot.ts';
import { storageName } from './storage-name.ts';
import {
  keyFingerprint,
  MANIFEST_FILE,
  parseManifest,
  readManifest,
  type BackupManifest,
} from './manifest.ts';

/**
 * Brings a backup back into an empty service: the database (into SLIPWAY_DATA_DIR's SQLite file,
 * or the empty PostgreSQL database of DATABASE_URL), the artifacts, and the encryption key when
 * the backup holds it and none is configured. The key it is given must be the backup's (by
 * fingerprint): with another, every stored secret would be unreadable. `slipway serve` then
 * applies any newer migrations.
 */
export async function restoreBackup(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'artifactsDir' | 'encryptionKey' | 'objectStorage'>,
  source: string,
  say: (line: string) => void,
  env: ObjectStorageEnv = process.env as ObjectStorageEnv,
): Promise<BackupManifest> {
  if (!isS3Url(source)) return restoreFrom(config, resolve(source), null, say);
  // A backup in a bucket: its manifest, database and key are fetched into the data dir first (the
  // database tools read files), its artifacts straight into place.
  const bucket = openBackupBucket(source, env);
  const text = await bucket.store.read(MANIFEST_FILE);
  if (text === null) throw new Error(`${source} is not a Slipway backup: it has no ${MANIFEST_FILE}`);
  const manifest = parseManifest(text.toString('utf8'), bucket.urlOf(MANIFEST_FILE));
  await mkdir(config.dataDir, { recursive: true });
  const dir = await mkdtemp(join(config.dataDir, '.restore-'));
  try {
    await writeFile(join(dir, MANIFEST_FILE), text);
    return await restoreFrom(config, dir, bucket, say, async () => {
      await download(bucket.store, manifest.database.file, join(dir, manifest.database.file));
      if (manifest.keyIncluded) await download(bucket.store, KEY_FILE, join(dir, KEY_FILE));
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The restore from a backup folder `dir` (for a bucket: its manifest there, the database and key
 * fetched by `fetch` once the target is checked, the artifacts from `bucket`).
 */
async function restoreFrom(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'artifactsDir' | 'encryptionKey' | 'objectStorage'>,
  dir: string,
  bucket: BackupBucket | null,
  say: (line: string) => void,
  fetch: () => Promise<void> = async () => undefined,
): Promise<BackupManifest> {
  const manifest = await readManifest(dir);
  await mkdir(config.dataDir, { recursive: true });
  requireSameStorage(config, manifest);
  const artifactsThere = await readdir(join(config.artifactsDir, 'manifests')).catch(() => []);
  if (artifactsThere.length > 0) {
    throw new Error(`${config.artifactsDir} holds artifacts already: restore into an empty service`);
  }
  await fetch();
  const key = await settleKey(config, dir, manifest);
  say(`Restoring the ${manifest.database.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'} database…`);
  await restoreDatabase(manifest.database, dir, config, (from, to) => copyFile(from, to));
  say(`Restoring ${manifest.files} artifact files to ${config.artifactsDir}…`);
  for (const name of manifest.artifacts) {
    if (bucket) await downloadTree(bucket.store, `artifacts/${name}`, join(config.artifactsDir, name));
    else await copyTree(join(dir, 'artifacts', name), join(config.artifactsDir, name));
  }
  if (key.write) await writeFile(join(config.dataDir, KEY_FILE), `${key.value}\n`, { mode: 0o600 });
  return manifest;
}

/** Which key the restored service uses: the configured one (checked), else the backup's. */
async function settleKey(
  config: Pick<Config, 'dataDir' | 'encryptionKey'>,
  dir: string,
  manifest: BackupManifest,
): Promise<{ write: boolean; value: string }> {
  const configured = findEncryptionKey(config.encryptionKey, config.dataDir);
  if (configured) {
    if (keyFingerprint(configured) !== manifest.keyFingerprint) {
      throw new Error(
        `The encryption key configured (fingerprint ${keyFingerprint(configured)}) is not the backed-up service's (${manifest.keyFingerprint}): set SLIPWAY_ENCRYPTION_KEY to that service's key`,
      );
    }
    return { write: false, value: '' };
  }
  if (!manifest.keyIncluded) {
    throw new Error(
      `This backup does not hold the encryption key (fingerprint ${manifest.keyFingerprint}): set SLIPWAY_ENCRYPTION_KEY to the backed-up service's key, or put it in ${join(config.dataDir, KEY_FILE)}`,
    );
  }
  const value = (await readFile(join(dir, KEY_FILE), 'utf8')).trim();
  if (keyFingerprint(Buffer.from(value, 'base64')) !== manifest.keyFingerprint) {
    throw new Error(`${join(dir, KEY_FILE)} is not the key the manifest names: the backup is damaged`);
  }
  return { write: true, value };
}

/** A backup that references object storage restores only into a service that uses that bucket. */
function requireSameStorage(config: Pick<Config, 'objectStorage'>, manifest: BackupManifest): void {
  const here = config.objectStorage ? storageName(config.objectStorage) : null;
  if (manifest.objectStorage && here !== manifest.objectStorage) {
    throw new Error(
      `This backup's artifacts live in object storage at ${manifest.objectStorage} (referenced, not copied): set SLIPWAY_OBJECT_STORAGE to that bucket and prefix${here ? ` (it is ${here})` : ''}`,
    );
  }
  if (!manifest.objectStorage && here) {
    throw new Error(
      `This backup holds its artifacts as files, and SLIPWAY_OBJECT_STORAGE is set: restore without it, then copy the artifacts into the bucket, or restore into a service that keeps them in SLIPWAY_ARTIFACTS_DIR`,
    );
  }
}
