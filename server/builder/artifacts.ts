import { LRUCache } from 'lru-cache';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { randomString } from '../lib/ids.ts';
import { hashKey, type BlobStore } from '../storage/blob-store.ts';
import { createLocalBlobStore } from '../storage/local-blob-store.ts';
import { BuildError } from './build-error.ts';
import { describeBytes } from '../lib/format.ts';

/** One file of a deployment's site. */
export const ManifestFile = z.object({
  /** sha256 of the content, lowercase hex: the blob's name. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** Size in bytes. */
  size: z.number().int().nonnegative(),
  /** Set when the file was executable (a server app's binaries); static files never are. */
  executable: z.literal(true).optional(),
});
export type ManifestFile = z.infer<typeof ManifestFile>;

/**
 * `<root>/manifests/<id>.json`: what one build produced. Immutable once written. The content
 * of each file is `<root>/blobs/<first two hex of hash>/<hash>`.
 */
export const ArtifactManifest = z.object({
  /** `art_` followed by 20 lowercase alphanumerics. */
  id: z.string(),
  /** ISO 8601 time the artifact was stored. */
  createdAt: z.string(),
  /** Sum of the files' sizes in bytes. */
  totalBytes: z.number().int().nonnegative(),
  /** Site path (`/index.html`, `/assets/app.js`: leading slash, forward slashes) to file. */
  files: z.record(z.string().startsWith('/'), ManifestFile),
  /**
   * A server app's symbolic links (`node_modules/.bin/next`, a monorepo's workspace packages):
   * path to a relative target that stays inside the artifact. Static sites have none.
   */
  links: z.record(z.string().startsWith('/'), z.string().min(1)).optional(),
});
export type ArtifactManifest = z.infer<typeof ArtifactManifest>;

export interface StoreLimits {
  /** Refuse an output larger than this many bytes in total. */
  maxBytes: number;
  /** Refuse an output of more files than this. */
  maxFiles: number;
  /** Paths relative to the directory that are left out, with everything under them (`.git`). */
  exclude?: string[];
  /** Told about each file left out: symbolic links, special files, names that are not UTF-8. */
  onSkip?: (path: string, reason: string) => void;
  /**
   * Keep symbolic links whose target, resolved as a path, stays inside the directory (a server
   * app's `node_modules`), and files' executable bits. Links that point outside are left out.
   */
  keepLinks?: boolean;
}

export interface StoredArtifact {
  artifactId: string;
  fileCount: number;
  totalBytes: number;
  /** Links kept (keepLinks). */
  linkCount: number;
}

export interface ArtifactStore {
  /** Where the artifacts are (a directory or an `s3://` URL). */
  root: string;
  /** The objects: `blobs/<ab>/<hash>` and `manifests/<id>.json`. */
  blobs: BlobStore;
  /** Stores every regular file under `dir` and writes the manifest; returns its id. */
  storeDirectory(dir: string, limits: StoreLimits): Promise<StoredArtifact>;
  /**
   * Stores several folders as one artifact, each under a URL prefix (`/_next/static`); a path
   * two folders both have comes from the first. The limits apply to the whole.
   */
  storeTrees(trees: readonly { dir: string; prefix: string }[], limits: StoreLimits): Promise<StoredArtifact>;
  /** The manifest, or null when there is no artifact with that id. */
  readManifest(id: string): Promise<ArtifactManifest | null>;
  /** Where the blob with this sha256 lives (whether or not it exists); a local store only. */
  blobPath(hash: string): string;
}

const ARTIFACT_ID = /^art_[a-z0-9]{20}$/;
const HASH = /^[0-9a-f]{64}$/;
/** Manifests kept in memory; a manifest with node_modules can hold tens of thousands of entries. */
const CACHE_SIZE = 256;
/** Files hashed and copied at once. */
const PARALLEL = 8;

interface Entry {
  absolute: string;
  sitePath: string;
  size: number;
  executable: boolean;
}

/**
 * The target of a link at `sitePath` when it stays inside the artifact, else null. It must be
 * relative, climb (`..`) only at its start, through the real folders above the link (the walk
 * never enters a link), and not above the root: a `..` after a name could climb out of wherever
 * a link of that name points (`d -> .` then `d/d/..`).
 */
export function linkInside(sitePath: string, target: string): string | null {
  if (target.startsWith('/') || target.includes('\\') || target.includes('\0')) return null;
  let depth = sitePath.split('/').length - 2;
  let descended = false;
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') descended = true;
    else if (descended || --depth < 0) return null;
  }
  return target;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function utf8(name: Buffer): string | null {
  try {
    return strictUtf8.decode(name);
  } catch {
    return null;
  }
}

async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Runs `fn` over `items` with at most `limit` running at once. */
async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** The key of an artifact's manifest in the blob store. */
export const manifestKey = (id: string) => `manifests/${id}.json`;

/**
 * A content-addressed store in a blob store: a local directory (a shared volume when several
 * machines build and serve) or object storage. A blob is written once, however many deployments
 * contain it, and whole (blob-store.ts), so a reader never sees half a file; the manifest last.
 */
export function createArtifactStore(
  store: BlobStore | string,
  opts: {
    now?: () => Date;
    /**
     * Told the blob keys of an artifact before any is looked for, so a storage collection
     * spares them (rescueBlobs); nothing by default.
     */
    beforeBlobs?: (keys: string[]) => Promise<void>;
  } = {},
): ArtifactStore {
  const blobs = typeof store === 'string' ? createLocalBlobStore(store) : store;
  const now = opts.now ?? (() => new Date());
  /** Manifests read, the least recently used out first; concurrent reads of one share the read. */
  const cache = new LRUCache<string, ArtifactManifest>({
    max: CACHE_SIZE,
    // A missing manifest (undefined) is not remembered: it may be written later.
    fetchMethod: async (id) => {
      const bytes = await blobs.read(manifestKey(id));
      if (!bytes) return undefined;
      return ArtifactManifest.parse(JSON.parse(bytes.toString('utf8')));
    },
  });

  const blobPath = (hash: string) => {
    if (!HASH.test(hash)) throw new Error(`Not a sha256 hash: ${hash}`);
    if (!blobs.localPath) throw new Error(`The artifacts are in ${blobs.location}, not on this disk`);
    return blobs.localPath(hashKey('blobs', hash));
  };

  async function collect(
    trees: readonly { dir: string; prefix: string }[],
    limits: StoreLimits,
  ): Promise<{ entries: Entry[]; links: Record<string, string> }> {
    const entries: Entry[] = [];
    const links: Record<string, string> = {};
    let totalBytes = 0;
    const tooMany = () =>
      new BuildError(
        `The build output has more than ${limits.maxFiles} files, the limit (SLIPWAY_MAX_OUTPUT_FILES).`,
        { limit: 'output' },
      );
    /** Paths stored so far, when several folders could both have one. */
    const taken = trees.length > 1 ? new Set<string>() : null;

    const walk = async (dir: string, base: string, current: string, excluded: Set<string>): Promise<void> => {
      const children = await readdir(current, { withFileTypes: true, encoding: 'buffer' });
      children.sort((a, b) => Buffer.compare(a.name, b.name));
      for (const child of children) {
        // A name that is not UTF-8 cannot be a URL path, nor be opened again by its decoded form.
        const name = utf8(child.name);
        if (name === null) {
          const shown =
            base + '/' + join(relative(dir, current), child.name.toString('utf8')).split(sep).join('/');
          limits.onSkip?.(shown, 'file name is not valid UTF-8');
          continue;
        }
        const absolute = join(current, name);
        if (excluded.has(absolute)) continue;
        const sitePath = base + '/' + relative(dir, absolute).split(sep).join('/');
        // A link could point anywhere on the build machine (`ln -s /etc/passwd`): never follow one.
        if (child.isSymbolicLink()) {
          const target = limits.keepLinks ? linkInside(sitePath, await readlink(absolute)) : null;
          if (target === null) limits.onSkip?.(sitePath, 'symbolic link');
          else if (!taken?.has(sitePath)) {
            taken?.add(sitePath);
            links[sitePath] = target;
          }
          continue;
        }
        if (child.isDirectory()) {
          await walk(dir, base, absolute, excluded);
          continue;
        }
        if (!child.isFile()) {
          limits.onSkip?.(sitePath, 'not a regular file');
          continue;
        }
        // Several folders: the first one's file wins a path both have.
        if (taken) {
          if (taken.has(sitePath)) continue;
          taken.add(sitePath);
        }
        const { size, mode } = await lstat(absolute);
        totalBytes += size;
        entries.push({ absolute, sitePath, size, executable: Boolean(limits.keepLinks && mode & 0o100) });
        // Counting stops early; sizes are summed to the end so the error can say how big it was.
        if (entries.length > limits.maxFiles) throw tooMany();
      }
    };
    for (const { dir, prefix } of trees) {
      const excluded = new Set((limits.exclude ?? []).map((p) => join(dir, p)));
      await walk(dir, prefix.replace(/\/+$/, ''), dir, excluded);
    }
    if (Object.keys(links).length + entries.length > limits.maxFiles) throw tooMany();
    if (totalBytes > limits.maxBytes) {
      throw new BuildError(
        `The build output is ${describeBytes(totalBytes)}, over the ${describeBytes(limits.maxBytes)} limit ` +
          '(SLIPWAY_MAX_OUTPUT_SIZE). Leave large files out of the output directory.',
        { limit: 'output' },
      );
    }
    return { entries, links };
  }

  async function storeTrees(
    trees: readonly { dir: string; prefix: string }[],
    limits: StoreLimits,
  ): Promise<StoredArtifact> {
    const { entries, links } = await collect(trees, limits);

    const files: Record<string, ManifestFile> = {};
    const hashes = new Map<Entry, string>();
    await forEachLimited(entries, PARALLEL, async (entry) => {
      const hash = await hashFile(entry.absolute);
      hashes.set(entry, hash);
      files[entry.sitePath] = entry.executable
        ? { hash, size: entry.size, executable: true }
        : { hash, size: entry.size };
    });
    // Before any blob is looked for: one a collection was about to remove is then written again.
    await opts.beforeBlobs?.([...new Set(hashes.values())].map((h) => hashKey('blobs', h)));
    await forEachLimited(entries, PARALLEL, async (entry) => {
      // Two builds storing the same new blob at once both write the same bytes: either wins.
      await blobs.putIfAbsent(hashKey('blobs', hashes.get(entry)!), { file: entry.absolute });
    });

    const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const totalBytes = entries.reduce((sum, e) => sum + e.size, 0);
    const manifest: ArtifactManifest = {
      id: `art_${randomString(20)}`,
      createdAt: now().toISOString(),
      totalBytes,
      files: sorted,
      ...(Object.keys(links).length ? { links } : {}),
    };
    // Last: a manifest that can be read names only blobs already stored.
    await blobs.putIfAbsent(manifestKey(manifest.id), { bytes: JSON.stringify(manifest) });
    return {
      artifactId: manifest.id,
      fileCount: entries.length,
      totalBytes,
      linkCount: Object.keys(links).length,
    };
  }

  return {
    root: blobs.location,
    blobs,
    blobPath,

    storeDirectory: (dir, limits) => storeTrees([{ dir, prefix: '/' }], limits),
    storeTrees,

    async readManifest(id) {
      // The id reaches a file path: only the exact shape is accepted, so `../` cannot.
      if (!ARTIFACT_ID.test(id)) return null;
      return (await cache.fetch(id)) ?? null;
    },
  };
}
