import { copyFile, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The artifact folders a backup keeps: built output (manifests and their blobs) and uploaded
 * files. Build caches are left out: a build without one installs again.
 */
export const BACKED_UP = ['manifests', 'blobs', 'uploads'] as const;

/** A file being written aside (`.<name>.tmp`, `tmp/`): never copied, it is not there yet. */
const unfinished = (name: string) => name.startsWith('.') && name.endsWith('.tmp');

/**
 * Copies `from` into `to`, file by file, skipping files being written; a file already at `to`
 * with the same size is kept (artifacts are content-addressed and never change). Returns what it
 * copied.
 */
export async function copyTree(from: string, to: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const walk = async (src: string, dst: string): Promise<void> => {
    const entries = await readdir(src, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    await mkdir(dst, { recursive: true });
    for (const entry of entries) {
      if (unfinished(entry.name)) continue;
      const s = join(src, entry.name);
      const d = join(dst, entry.name);
      if (entry.isDirectory()) {
        await walk(s, d);
      } else if (entry.isFile()) {
        const size = (await stat(s)).size;
        const there = await stat(d).catch(() => null);
        if (there?.size === size) continue;
        await copyFile(s, d);
        files++;
        bytes += size;
      }
    }
  };
  await walk(from, to);
  return { files, bytes };
}

/** Copies the backed-up artifact folders of `artifactsDir` (or those named) into `<dir>/artifacts`. */
export async function copyArtifacts(
  artifactsDir: string,
  dir: string,
  folders: readonly string[] = BACKED_UP,
): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const name of folders) {
    const copied = await copyTree(join(artifactsDir, name), join(dir, 'artifacts', name));
    files += copied.files;
    bytes += copied.bytes;
  }
  return { files, bytes };
}
