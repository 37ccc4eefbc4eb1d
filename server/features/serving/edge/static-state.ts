import type { ArtifactReader, Manifest, ManifestFile } from './artifact-reader.ts';
import type { BlobCache } from './blob-cache.ts';
import type { CompressedCache, Encoding } from './compression.ts';

/** Counts the body bytes a response sent, for traffic metrics. */
export interface ByteCounter {
  bytes: number;
}

/**
 * Header fields as a flat list, name, value, name, value..., the form writeHead reads fastest.
 * Nothing may call setHeader before: Node would then copy every field into its header map first.
 */
export type HeaderList = string[];

/** What a whole-file answer sends (the blob or a compressed copy of it) and its header fields. */
export interface WholeAnswer {
  path: string;
  size: number;
  /** Every field but the deployment's name (see `headersNaming`). */
  headers: HeaderList;
  /**
   * The fields with the name of the deployment that last sent this answer in front: the one that
   * serves the artifact, nearly always, so a request does not copy the list.
   */
  named?: { deploymentId: string; headers: HeaderList };
}

/**
 * One file of a manifest as answered with one status: what all its answers share, worked out on
 * its first request instead of on each one (its type, cache policy and validators, its blob's
 * path, the fields of the whole answer). Manifests never change, so neither does this; it goes
 * with its manifest (see `StaticState.preparedFiles`). Per request stay the deployment's name,
 * the method (HEAD), conditional and range headers, and the encodings the client accepts.
 */
export interface PreparedFile {
  /** The manifest path it was matched as: pages name it. */
  path: string;
  file: ManifestFile;
  status: 200 | 404;
  blob: string;
  /** Sent compressed when the client accepts it and a copy is ready (type and size allow). */
  compressible: boolean;
  lastModified: Date | undefined;
  /** Content-Type, ETag, Cache-Control, Last-Modified and Vary: what every answer carries, a 304 too. */
  fields: Readonly<Record<string, string>>;
  /** The whole file as it is. */
  identity: WholeAnswer;
  /** The whole compressed copies, made on the first answer that sends each. */
  encoded: Partial<Record<Encoding, WholeAnswer>>;
}

/**
 * What every answer of one static server shares (createStaticServer makes it once), passed to
 * the functions that answer rather than closed over.
 */
export interface StaticState {
  artifacts: ArtifactReader;
  compressed: CompressedCache;
  blobs: BlobCache;
  /**
   * Prepared files by manifest, then by path, one map per status (`/404.html` is both a page of
   * its own and every missing path's answer). Held no longer than the manifest itself, which the
   * reader keeps a bounded number of: at most two entries per file of a cached manifest.
   */
  preparedFiles: WeakMap<Manifest, Record<200 | 404, Map<string, PreparedFile>>>;
}
