import type { BlobStore } from '../../../platform/storage/blob-store.ts';
import type { ArtifactManifest } from './manifest.ts';

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
  /**
   * Stores files whose content hash is known (uploaded files, checked when they were received)
   * as one artifact, without reading them: only a blob the store lacks is asked of `source`.
   * The limits apply as to a folder; a path that is not a plain relative one is refused.
   * Blobs are shared by every tenant: how many were there already is never told to a tenant
   * (it would say whether another one stored the same bytes).
   */
  storeHashed(
    files: readonly HashedFile[],
    source: BlobSource,
    limits: Pick<StoreLimits, 'maxBytes' | 'maxFiles'>,
  ): Promise<StoredArtifact>;
  /** The manifest, or null when there is no artifact with that id. */
  readManifest(id: string): Promise<ArtifactManifest | null>;
  /** Where the blob with this sha256 lives (whether or not it exists); a local store only. */
  blobPath(hash: string): string;
}

/** A file of known content: its path relative to the site's root (`a/b.html`), sha256 and size. */
export interface HashedFile {
  path: string;
  sha256: string;
  size: number;
}

/**
 * The bytes of a blob the store lacks, as a file (`move`: a copy made for the store, which may
 * take it; removed afterwards either way), or null when they are no longer anywhere.
 */
export type BlobSource = (sha256: string) => Promise<{ file: string; move?: boolean } | null>;

/** A folder stored under a URL prefix (`/_next/static`; `/` for a whole site). */
export interface Tree {
  dir: string;
  prefix: string;
}

/** A regular file to store. */
export interface Entry {
  absolute: string;
  sitePath: string;
  size: number;
  executable: boolean;
}
