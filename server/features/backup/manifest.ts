import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** What a backup folder holds (`manifest.json`), read back by `slipway restore`. */
export const BackupManifest = z.object({
  format: z.literal(1),
  createdAt: z.string(),
  database: z.object({
    dialect: z.enum(['sqlite', 'postgres']),
    /** `database.sqlite` or `database.pgdump`, inside the backup folder. */
    file: z.string(),
    /** The newest migration applied when the snapshot was taken. */
    migration: z.string().nullable(),
  }),
  /** The encryption key's SHA-256, first 16 hex digits: restore checks the key it is given. */
  keyFingerprint: z.string().regex(/^[0-9a-f]{16}$/),
  /** Whether `encryption.key` is in the folder (`--include-key`). */
  keyIncluded: z.boolean(),
  /** The artifacts' folders copied under `artifacts/` (manifests, blobs, uploads); none with object storage. */
  artifacts: z.array(z.string()),
  /**
   * With object storage, the bucket and prefix the artifacts live in (`<bucket URL><prefix>`):
   * referenced, not copied; null when they were copied.
   */
  objectStorage: z.string().nullable().default(null),
  /** Files and bytes copied. */
  files: z.number().int(),
  bytes: z.number().int(),
});
export type BackupManifest = z.infer<typeof BackupManifest>;

export const MANIFEST_FILE = 'manifest.json';

export const keyFingerprint = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 16);

export async function writeManifest(dir: string, manifest: BackupManifest): Promise<void> {
  await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Reads and checks a backup's manifest, naming the folder when it is not one. */
export async function readManifest(dir: string): Promise<BackupManifest> {
  const file = join(dir, MANIFEST_FILE);
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) throw new Error(`${dir} is not a Slipway backup: it has no ${MANIFEST_FILE}`);
  return parseManifest(text, file);
}

/** Checks a backup's manifest (`file` names it in errors). */
export function parseManifest(text: string, file: string): BackupManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not JSON`);
  }
  const result = BackupManifest.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(
      `${file} is not a backup manifest this version reads: ${issue.path.join('.')} ${issue.message}`,
    );
  }
  return result.data;
}
