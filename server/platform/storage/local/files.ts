import { constants } from 'node:fs';
import { copyFile, lstat, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobBody, BlobInfo } from '../blob-store.ts';

export const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

export async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** Fills a temporary file from `body` (renamed when it may be moved). */
export async function stage(tmp: string, body: BlobBody): Promise<void> {
  if ('bytes' in body) return writeFile(tmp, body.bytes);
  if (body.move) {
    try {
      return await rename(body.file, tmp);
    } catch (err) {
      // Another file system: copied instead.
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    }
  }
  await copyFile(body.file, tmp, constants.COPYFILE_FICLONE);
}

/** Every file under `dir`, keyed `prefix/<its path under dir>`; nothing when `dir` is not a folder. */
export async function* walk(dir: string, prefix: string): AsyncGenerator<BlobInfo & { key: string }> {
  const children = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
    if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  });
  for (const child of children) {
    const key = prefix ? `${prefix}/${child.name}` : child.name;
    if (child.isDirectory()) yield* walk(join(dir, child.name), key);
    else if (child.isFile()) {
      const s = await lstat(join(dir, child.name)).catch(() => null);
      if (s) yield { key, size: s.size, modifiedAt: s.mtime };
    }
  }
}
