import { constants, createReadStream } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomString } from '../../core/ids.ts';
import { checkKey, type BlobBody, type BlobInfo, type BlobStore } from './blob-store.ts';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * A blob store in a local directory (SLIPWAY_ARTIFACTS_DIR; a shared volume when several
 * machines build and serve): each key is the file of that relative path. Written through a
 * temporary file in `<root>/tmp` renamed into place, so a reader never sees half a file.
 */
export function createLocalBlobStore(root: string): BlobStore {
  const tmpDir = join(root, 'tmp');
  const pathOf = (key: string) => join(root, checkKey(key));

  async function exists(path: string): Promise<boolean> {
    return lstat(path).then(
      () => true,
      () => false,
    );
  }

  /** Fills a temporary file from `body` (renamed when it may be moved). */
  async function stage(tmp: string, body: BlobBody): Promise<void> {
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

  async function* walk(dir: string, prefix: string): AsyncGenerator<BlobInfo & { key: string }> {
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

  return {
    location: root,
    localPath: pathOf,

    async putIfAbsent(key, body) {
      const dest = pathOf(key);
      if (await exists(dest)) return false;
      await Promise.all([mkdir(dirname(dest), { recursive: true }), mkdir(tmpDir, { recursive: true })]);
      const tmp = join(tmpDir, `${randomString(16)}.tmp`);
      try {
        await stage(tmp, body);
        // Two writers of one content-addressed key both rename a complete copy: either wins.
        await rename(tmp, dest);
        return true;
      } catch (err) {
        await rm(tmp, { force: true });
        throw err;
      }
    },

    async read(key) {
      return readFile(pathOf(key)).catch((err: unknown) => {
        if (isMissing(err)) return null;
        throw err;
      });
    },

    async stream(key, range) {
      const path = pathOf(key);
      if (!(await exists(path))) return null;
      return createReadStream(path, range ?? {});
    },

    async head(key) {
      const s = await lstat(pathOf(key)).catch(() => null);
      return s?.isFile() ? { size: s.size, modifiedAt: s.mtime } : null;
    },

    list(prefix) {
      // Listed by the folder the prefix names, then filtered: `blobs/a` lists `blobs/` and keeps `blobs/a*`.
      const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
      if (folder) checkKey(folder);
      const all = walk(folder ? join(root, folder) : root, folder);
      return (async function* () {
        for await (const entry of all)
          if (entry.key.startsWith(prefix) && !entry.key.startsWith('tmp/')) yield entry;
      })();
    },

    async delete(key) {
      await rm(pathOf(key), { force: true });
    },

    async touch(key) {
      const now = new Date();
      return utimes(pathOf(key), now, now).then(
        () => true,
        (err: unknown) => {
          if (isMissing(err)) return false;
          throw err;
        },
      );
    },
  };
}
