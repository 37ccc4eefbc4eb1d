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
  /**
   * Rules (git's syntax, matched at any depth) for what is left out even when no ignore file says
   * so: secrets and what is never source (see `LEFT_OUT_BY_DEFAULT`). Only a negation in
   * `takeBackFile` uploads such a file; an ignore file's negation does not.
   */
  leaveOut?: readonly string[];
  /** The ignore file whose negations (`!.env.production`) take back what `leaveOut` leaves out. */
  takeBackFile?: string;
  /** Told of each file left out that is not ignored by a pattern: links, sockets. */
  onSkip?: (path: string, reason: string) => void;
  /** Told of each file or folder `leaveOut` left out, with how many files it holds (1 for a file). */
  onLeftOut?: (path: string, isDir: boolean, files: number) => void;
}

/**
 * What `slipway deploy` leaves out unless a `.slipwayignore` negation names it
 * (docs/cli.md#what-is-uploaded): dotenv files but their templates (`slipway env pull` writes
 * secrets into `.env.local`), and installed dependencies.
 */
export const SECRETS_LEFT_OUT: readonly string[] = [
  '.env*',
  '!.env.example',
  '!.env.sample',
  '!.env.template',
];
export const LEFT_OUT_BY_DEFAULT: readonly string[] = [...SECRETS_LEFT_OUT, 'node_modules'];

/** Never uploaded: git's own data, and the CLI's link to a project (and a local data dir). */
const ALWAYS = new Set(['.git', '.slipway']);

interface Rules {
  /** The folder the rules came from, relative to the root ('' for the root). */
  base: string;
  ig: Ignore;
  /** Read from the take-back file. */
  takesBack: boolean;
}

/**
 * Every regular file under `root`, hashed, in a stable order. `.git` and `.slipway`, what `leaveOut`
 * names and what the ignore files exclude are left out; symbolic links are left out (the service
 * refuses them) and reported through `onSkip`. As git reads them, a deeper ignore file overrides a
 * shallower one, and in one folder the later of `ignoreFiles` overrides the earlier.
 */
export async function collectFiles(root: string, opts: CollectOptions = {}): Promise<LocalFile[]> {
  const found: Omit<LocalFile, 'sha256'>[] = [];
  const ignoreFiles = opts.ignoreFiles ?? [];
  const leaveOut = opts.leaveOut?.length ? ignore().add([...opts.leaveOut]) : null;

  /** The last rule set with an opinion on `path` decides; `null`: none has one. */
  const decide = (rules: readonly Rules[], path: string, isDir: boolean) => {
    let verdict: { ignored: boolean; takesBack: boolean } | null = null;
    for (const { base, ig, takesBack } of rules) {
      const local = base ? path.slice(base.length + 1) : path;
      const t = ig.test(isDir ? `${local}/` : local);
      if (t.ignored || t.unignored) verdict = { ignored: t.ignored, takesBack };
    }
    return verdict;
  };

  // Each directory's rules apply to paths relative to that directory, as git reads them.
  async function walk(dir: string, rel: string, rules: Rules[]): Promise<void> {
    const active = [...rules];
    for (const name of ignoreFiles) {
      const text = await readFile(join(dir, name), 'utf8').catch(() => null);
      if (text !== null)
        active.push({ base: rel, ig: ignore().add(text), takesBack: name === opts.takeBackFile });
    }
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (ALWAYS.has(entry.name)) continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const isDir = entry.isDirectory();
      const absolute = join(dir, entry.name);
      const verdict = decide(active, path, isDir);
      if (leaveOut?.ignores(isDir ? `${entry.name}/` : entry.name)) {
        if (!(verdict && !verdict.ignored && verdict.takesBack)) {
          opts.onLeftOut?.(isDir ? `${path}/` : path, isDir, isDir ? await countFilesIn(absolute) : 1);
          continue;
        }
      } else if (verdict?.ignored) continue;
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

/** The regular files under `dir`, at any depth (to say what leaving it out left out). */
async function countFilesIn(dir: string): Promise<number> {
  let n = 0;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (entry.isDirectory()) n += await countFilesIn(join(dir, entry.name));
    else if (entry.isFile()) n++;
  }
  return n;
}
