import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../config.ts';
import { findEncryptionKey, KEY_FILE } from '../lib/secrets.ts';
import { copyTree } from './artifacts-copy.ts';
import { restoreDatabase } from './database-snapshot.ts';
import { keyFingerprint, readManifest, type BackupManifest } from './manifest.ts';

/**
 * Brings a backup back into an empty service: the database (into SLIPWAY_DATA_DIR's SQLite file,
 * or the empty PostgreSQL database of DATABASE_URL), the artifacts, and the encryption key when
 * the backup holds it and none is configured. The key it is given must be the backup's (by
 * fingerprint): with another, every stored secret would be unreadable. `slipway serve` then
 * applies any newer migrations.
 */
export async function restoreBackup(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'artifactsDir' | 'encryptionKey'>,
  source: string,
  say: (line: string) => void,
): Promise<BackupManifest> {
  const dir = resolve(source);
  const manifest = await readManifest(dir);
  await mkdir(config.dataDir, { recursive: true });
  const key = await settleKey(config, dir, manifest);
  const artifactsThere = await readdir(join(config.artifactsDir, 'manifests')).catch(() => []);
  if (artifactsThere.length > 0) {
    throw new Error(`${config.artifactsDir} holds artifacts already: restore into an empty service`);
  }
  say(`Restoring the ${manifest.database.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'} database…`);
  await restoreDatabase(manifest.database, dir, config, (from, to) => copyFile(from, to));
  say(`Restoring ${manifest.files} artifact files to ${config.artifactsDir}…`);
  for (const name of manifest.artifacts) {
    await copyTree(join(dir, 'artifacts', name), join(config.artifactsDir, name));
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
