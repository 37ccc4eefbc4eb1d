import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, copyFile, mkdir, rename, rm, stat, symlink } from 'node:fs/promises';
import { linkInside } from '../../builds/roles.ts';
import { dirname, join } from 'node:path';
import type { ArtifactReader } from './artifact-reader.ts';

const PARALLEL = 8;

/** The path segments of a manifest key, or null when one could step outside the directory. */
function segmentsOf(path: string): string[] | null {
  const parts = path.split('/').slice(1);
  const bad = parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\0'));
  return bad || parts.length === 0 ? null : parts;
}

export interface Materializer {
  /** `<runtimesDir>/<artifactId>`, holding the artifact's files; written on first use. */
  dirFor(artifactId: string): Promise<string>;
}

/**
 * Writes artifacts out as directories that a server process can run in. Files are copied (a
 * reflink where the file system can), never hard-linked: an app writing to one of its own files
 * would otherwise change the shared blob under every deployment that contains it. Each
 * directory is assembled aside and renamed into place, so a half-written one is never used.
 */
export function createMaterializer(artifacts: ArtifactReader, runtimesDir: string): Materializer {
  const pending = new Map<string, Promise<string>>();

  const write = async (artifactId: string): Promise<string> => {
    const dest = join(runtimesDir, artifactId);
    if (await stat(dest).catch(() => null)) return dest;
    const manifest = await artifacts.manifest(artifactId);
    if (!manifest) throw new Error(`artifact ${artifactId} is not in the artifact store`);
    const tmp = join(runtimesDir, `.tmp-${artifactId}-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      const entries = Object.entries(manifest.files);
      let next = 0;
      const lane = async () => {
        while (next < entries.length) {
          const [path, file] = entries[next++]!;
          const parts = segmentsOf(path);
          if (!parts) throw new Error(`artifact ${artifactId} lists an unsafe path: ${path}`);
          const target = join(tmp, ...parts);
          await mkdir(dirname(target), { recursive: true });
          const ready = artifacts.ensureBlob(file.hash);
          if (ready && !(await ready)) throw new Error(`artifact ${artifactId} lacks the blob ${file.hash}`);
          await copyFile(artifacts.blobPath(file.hash), target, constants.COPYFILE_FICLONE);
          // The blob's own mode is whoever stored it first's: the manifest says what this file is.
          await chmod(target, file.executable ? 0o755 : 0o644);
        }
      };
      await mkdir(tmp, { recursive: true });
      await Promise.all(Array.from({ length: PARALLEL }, lane));
      // Links last: files never reach the disk through one. Each is checked again as stored.
      for (const [path, to] of Object.entries(manifest.links ?? {})) {
        const parts = segmentsOf(path);
        if (!parts || linkInside(path, to) === null) {
          throw new Error(`artifact ${artifactId} lists an unsafe link: ${path} -> ${to}`);
        }
        const at = join(tmp, ...parts);
        await mkdir(dirname(at), { recursive: true });
        await symlink(to, at);
      }
      try {
        await rename(tmp, dest);
      } catch (err) {
        // Another process put the same artifact in place first: theirs is as good as ours.
        if (!(await stat(dest).catch(() => null))) throw err;
        await rm(tmp, { recursive: true, force: true });
      }
      return dest;
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
  };

  return {
    dirFor(artifactId) {
      let p = pending.get(artifactId);
      if (!p) {
        p = write(artifactId).finally(() => pending.delete(artifactId));
        pending.set(artifactId, p);
      }
      return p;
    },
  };
}
