import { chmod, chown, copyFile, link, lstat, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';

/** What a tree holds: its regular files (each link counted) and their bytes. */
export interface TreeCount {
  files: number;
  bytes: number;
}

/** Each tree's count, by its path. */
export type TreeCounts = Record<string, TreeCount>;

export const totalOf = (counts: TreeCounts): TreeCount =>
  Object.values(counts).reduce((t, c) => ({ files: t.files + c.files, bytes: t.bytes + c.bytes }), {
    files: 0,
    bytes: 0,
  });

interface Entry {
  from: string;
  rel: string;
  stat: Stats;
}

/**
 * Every entry under `root` (itself included), links not followed; sockets and devices left out.
 * A folder comes before what it holds. Folders are read side by side: thousands of small files
 * are the common case.
 */
async function walk(root: string, rel: string, out: Entry[]): Promise<void> {
  const stat = await lstat(join(root, rel));
  if (!stat.isDirectory() && !stat.isFile() && !stat.isSymbolicLink()) return;
  out.push({ from: join(root, rel), rel, stat });
  if (!stat.isDirectory()) return;
  const names = await readdir(join(root, rel));
  await Promise.all(names.map((name) => walk(root, join(rel, name), out)));
}

/** Runs `fn` on each item, at most `width` at a time. */
async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/** Folders first, in order (parents before children), then the rest side by side. */
async function build<E extends Entry>(
  entries: E[],
  makeDir: (e: E) => Promise<void>,
  makeOther: (e: E) => Promise<void>,
) {
  for (const e of entries) if (e.stat.isDirectory()) await makeDir(e);
  await inParallel(
    entries.filter((e) => !e.stat.isDirectory()),
    32,
    makeOther,
  );
}

const linkOrCopy = (from: string, to: string) =>
  link(from, to).catch(async (err: NodeJS.ErrnoException) => {
    // Another file system (a shared artifacts directory): a copy does.
    if (err.code !== 'EXDEV' && err.code !== 'EPERM') throw err;
    await copyFile(from, to);
  });

/**
 * Puts the trees `paths` of `workspace` into `into` (same relative paths) for keeping: files by
 * hard link when every link of the file is inside these trees (nothing outside shares the
 * inode) or the file is already kept (read-only and ours), else by copy; then each kept file
 * belongs to the service and loses its write bits, so no later build can change it in place.
 * Runs after the build's processes are gone; links are recreated, never followed.
 */
export async function keepTrees(workspace: string, paths: string[], into: string): Promise<TreeCounts> {
  const entries: (Entry & { top: string })[] = [];
  for (const p of paths) {
    const found: Entry[] = [];
    await walk(workspace, p, found);
    for (const e of found) entries.push({ ...e, top: p });
  }
  const seen = new Map<number, number>();
  for (const e of entries) if (e.stat.isFile()) seen.set(e.stat.ino, (seen.get(e.stat.ino) ?? 0) + 1);
  const uid = process.getuid?.() ?? -1;
  const kept = (s: Stats) => s.uid === uid && (s.mode & 0o222) === 0;
  const counts: TreeCounts = Object.fromEntries(paths.map((p) => [p, { files: 0, bytes: 0 }]));
  await build(
    entries,
    (e) => mkdir(join(into, e.rel), { recursive: true, mode: 0o755 }).then(() => undefined),
    async (e) => {
      const to = join(into, e.rel);
      if (e.stat.isSymbolicLink()) return symlink(await readlink(e.from), to);
      if (seen.get(e.stat.ino) === e.stat.nlink || kept(e.stat)) await linkOrCopy(e.from, to);
      else await copyFile(e.from, to);
      if (uid === 0 && e.stat.uid !== 0) await chown(to, 0, 0);
      if ((e.stat.mode & 0o222) !== 0) await chmod(to, e.stat.mode & 0o555);
      counts[e.top]!.files++;
      counts[e.top]!.bytes += e.stat.size;
    },
  );
  return counts;
}

/**
 * Puts the kept trees `paths` of `from` into `workspace`: files by hard link (read-only, the
 * service's: a build can replace them, never change them), or by copy where `copy` says so
 * (caches a build rewrites in place). What already is at a path is removed first, and no
 * folder on the way may be a link, so a checkout cannot point the restore outside the
 * workspace. `own` gets the folders and copies made, for the build's user to own.
 */
export async function restoreTrees(
  from: string,
  paths: string[],
  workspace: string,
  opts: {
    copy: (rel: string) => boolean;
    own: (made: string[]) => Promise<void>;
    clear: (p: string) => Promise<void>;
  },
): Promise<TreeCounts> {
  const counts: TreeCounts = {};
  const made: string[] = [];
  for (const p of paths) {
    const present = await lstat(join(from, p)).then(
      () => true,
      () => false,
    );
    if (!present) continue;
    const count = (counts[p] = { files: 0, bytes: 0 });
    await realFolders(workspace, p, made);
    await opts.clear(join(workspace, p));
    const entries: Entry[] = [];
    await walk(from, p, entries);
    await build(
      entries,
      async (e) => {
        await mkdir(join(workspace, e.rel), { mode: 0o755 });
        made.push(join(workspace, e.rel));
      },
      async (e) => {
        const to = join(workspace, e.rel);
        if (e.stat.isSymbolicLink()) return symlink(await readlink(e.from), to);
        if (opts.copy(e.rel)) {
          await copyFile(e.from, to);
          await chmod(to, e.stat.mode | 0o200);
          made.push(to);
        } else await linkOrCopy(e.from, to);
        count.files++;
        count.bytes += e.stat.size;
      },
    );
  }
  await opts.own(made);
  return counts;
}

/** Makes the folders above `rel` in `root` that are missing; refuses one that is a link or a file. */
async function realFolders(root: string, rel: string, made: string[]) {
  const parts = rel.split('/').slice(0, -1);
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    const s = await lstat(at).catch(() => null);
    if (s === null) {
      await mkdir(at, { mode: 0o755 });
      made.push(at);
    } else if (!s.isDirectory() || s.isSymbolicLink()) {
      throw new Error(`${rel}: ${part} is not a folder`);
    }
  }
}
