import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import ignoreModule, { type Ignore } from 'ignore';

// A CommonJS module whose export is typed differently by Node's resolution and the Action's
// bundler; at run time it is the function, which also carries itself as `default`.
const ignore = ((ignoreModule as unknown as { default?: unknown }).default ?? ignoreModule) as () => Ignore;

/** A file to upload: where it is, and what the deployment lists. */
export interface LocalFile {
  /** Relative, forward slashes: `assets/app.js`. */
  path: string;
  absolute: string;
  sha256: string;
  size: number;
  /** 0o755 or 0o644. */
  mode: number;
}

export interface CollectOptions {
  /** Ignore files read in every directory, patterns relative to it (git's rules): `.gitignore`, `.slipwayignore`. */
  ignoreFiles?: readonly string[];
  /** Told of each file left out that is not ignored by a pattern: links, sockets. */
  onSkip?: (path: string, reason: string) => void;
}

/** Never uploaded: git's own data, and the CLI's link to a project (and a local data dir). */
const ALWAYS = new Set(['.git', '.slipway']);

/**
 * Every regular file under `root`, hashed, in a stable order. Directories named `.git` or `.slipway` and what
 * the ignore files exclude are left out; symbolic links are left out (the service refuses them)
 * and reported through `onSkip`.
 */
export async function collectFiles(root: string, opts: CollectOptions = {}): Promise<LocalFile[]> {
  const found: Omit<LocalFile, 'sha256'>[] = [];
  const ignoreFiles = opts.ignoreFiles ?? [];

  // Each directory's rules apply to paths relative to that directory, as git reads them.
  async function walk(dir: string, rel: string, rules: { base: string; ig: Ignore }[]): Promise<void> {
    const own = ignore();
    let hasOwn = false;
    for (const name of ignoreFiles) {
      const text = await readFile(join(dir, name), 'utf8').catch(() => null);
      if (text !== null) {
        own.add(text);
        hasOwn = true;
      }
    }
    const active = hasOwn ? [...rules, { base: rel, ig: own }] : rules;
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (ALWAYS.has(entry.name)) continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const isDir = entry.isDirectory();
      const ignored = active.some(({ base, ig }) => {
        const local = base ? path.slice(base.length + 1) : path;
        return ig.ignores(isDir ? `${local}/` : local);
      });
      if (ignored) continue;
      const absolute = join(dir, entry.name);
      if (isDir) await walk(absolute, path, active);
      else if (entry.isFile()) {
        const s = await lstat(absolute);
        found.push({ path, absolute, size: s.size, mode: s.mode & 0o111 ? 0o755 : 0o644 });
      } else opts.onSkip?.(path, entry.isSymbolicLink() ? 'a symbolic link' : 'not a regular file');
    }
  }

  await walk(root, '', []);
  const files: LocalFile[] = new Array<LocalFile>(found.length);
  let next = 0;
  const lane = async () => {
    while (next < found.length) {
      const i = next++;
      const f = found[i]!;
      const hash = createHash('sha256');
      // Small files in one read (most of a site); large ones streamed, so memory stays flat.
      if (f.size <= 1 << 20) hash.update(await readFile(f.absolute));
      else await pipeline(createReadStream(f.absolute), hash);
      files[i] = { ...f, sha256: hash.digest('hex') };
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, found.length) }, lane));
  return files;
}
