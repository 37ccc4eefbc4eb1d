import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { describeBytes } from '../../../core/format.ts';
import { BuildError } from '../../../platform/sandbox/build-error.ts';
import { linkInside } from './link-inside.ts';
import type { Entry, StoreLimits, Tree } from './types.ts';

/** What one collection keeps while it walks the folders, passed to each step of the walk. */
interface Collection {
  limits: StoreLimits;
  entries: Entry[];
  links: Record<string, string>;
  totalBytes: number;
  /** Paths stored so far, when several folders could both have one. */
  taken: Set<string> | null;
}

/** One folder walked: its root, the URL prefix it goes under, and the paths left out. */
interface Walk {
  dir: string;
  base: string;
  excluded: Set<string>;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function utf8(name: Buffer): string | null {
  try {
    return strictUtf8.decode(name);
  } catch {
    return null;
  }
}

const tooMany = (limits: Pick<StoreLimits, 'maxFiles'>) =>
  new BuildError(
    `The build output has more than ${limits.maxFiles} files, the limit (SLIPWAY_MAX_OUTPUT_FILES).`,
    {
      limit: 'output',
    },
  );

/**
 * The regular files (and, with keepLinks, the links that stay inside) under each folder, in
 * name order; refused past the limits.
 */
export async function collect(
  trees: readonly Tree[],
  limits: StoreLimits,
): Promise<{ entries: Entry[]; links: Record<string, string> }> {
  const c: Collection = {
    limits,
    entries: [],
    links: {},
    totalBytes: 0,
    taken: trees.length > 1 ? new Set() : null,
  };
  for (const { dir, prefix } of trees) {
    const excluded = new Set((limits.exclude ?? []).map((p) => join(dir, p)));
    await walk(c, { dir, base: prefix.replace(/\/+$/, ''), excluded }, dir);
  }
  checkLimits(Object.keys(c.links).length + c.entries.length, c.totalBytes, limits);
  return { entries: c.entries, links: c.links };
}

/** Refuses an output of more files or bytes than the limits allow. */
export function checkLimits(
  count: number,
  totalBytes: number,
  limits: Pick<StoreLimits, 'maxBytes' | 'maxFiles'>,
): void {
  if (count > limits.maxFiles) throw tooMany(limits);
  if (totalBytes > limits.maxBytes) {
    throw new BuildError(
      `The build output is ${describeBytes(totalBytes)}, over the ${describeBytes(limits.maxBytes)} limit ` +
        '(SLIPWAY_MAX_OUTPUT_SIZE). Leave large files out of the output directory.',
      { limit: 'output' },
    );
  }
}

async function walk(c: Collection, w: Walk, current: string): Promise<void> {
  const children = await readdir(current, { withFileTypes: true, encoding: 'buffer' });
  children.sort((a, b) => Buffer.compare(a.name, b.name));
  for (const child of children) await visit(c, w, current, child);
}

async function visit(c: Collection, w: Walk, current: string, child: Dirent<Buffer>): Promise<void> {
  const { limits } = c;
  // A name that is not UTF-8 cannot be a URL path, nor be opened again by its decoded form.
  const name = utf8(child.name);
  if (name === null) {
    const shown =
      w.base + '/' + join(relative(w.dir, current), child.name.toString('utf8')).split(sep).join('/');
    limits.onSkip?.(shown, 'file name is not valid UTF-8');
    return;
  }
  const absolute = join(current, name);
  if (w.excluded.has(absolute)) return;
  const sitePath = w.base + '/' + relative(w.dir, absolute).split(sep).join('/');
  // A link could point anywhere on the build machine (`ln -s /etc/passwd`): never follow one.
  if (child.isSymbolicLink()) return addLink(c, absolute, sitePath);
  if (child.isDirectory()) return walk(c, w, absolute);
  if (!child.isFile()) {
    limits.onSkip?.(sitePath, 'not a regular file');
    return;
  }
  // Several folders: the first one's file wins a path both have.
  if (c.taken) {
    if (c.taken.has(sitePath)) return;
    c.taken.add(sitePath);
  }
  const { size, mode } = await lstat(absolute);
  c.totalBytes += size;
  c.entries.push({ absolute, sitePath, size, executable: Boolean(limits.keepLinks && mode & 0o100) });
  // Counting stops early; sizes are summed to the end so the error can say how big it was.
  if (c.entries.length > limits.maxFiles) throw tooMany(limits);
}

async function addLink(c: Collection, absolute: string, sitePath: string): Promise<void> {
  const target = c.limits.keepLinks ? linkInside(sitePath, await readlink(absolute)) : null;
  if (target === null) c.limits.onSkip?.(sitePath, 'symbolic link');
  else if (!c.taken?.has(sitePath)) {
    c.taken?.add(sitePath);
    c.links[sitePath] = target;
  }
}
