import type { Readable } from 'node:stream';

/**
 * Where artifacts and uploaded files live: a local directory (the default) or an S3-compatible
 * bucket (SLIPWAY_OBJECT_STORAGE). Keys are relative paths of lowercase letters, digits and
 * `_ . / -` (`blobs/ab/<sha256>`, `manifests/<id>.json`, `uploads/ab/<sha256>`). Every object is
 * written once, whole, under a key that names its content or a fresh id, so an object that can be
 * read is complete and never changes.
 */
export interface BlobStore {
  /** Where the objects are, for logs and errors: a directory or an `s3://` URL without secrets. */
  readonly location: string;
  /**
   * Writes the file (or bytes) under `key` unless an object is already there; true when this
   * call wrote it. `move`: the file may be taken (renamed) rather than copied; the caller removes
   * it either way afterwards.
   */
  putIfAbsent(key: string, body: BlobBody): Promise<boolean>;
  /** The whole object, or null when there is none. */
  read(key: string): Promise<Buffer | null>;
  /** The object's bytes `start` to `end` (inclusive; the whole by default), or null when there is none. */
  stream(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  /** Its size and when it was written, or null when there is none. */
  head(key: string): Promise<BlobInfo | null>;
  /** Every object whose key starts with `prefix`, in no set order. */
  list(prefix: string): AsyncIterable<BlobInfo & { key: string }>;
  /** Removes the object; nothing when there is none. */
  delete(key: string): Promise<void>;
  /**
   * Sets the object's modified time to now, its bytes unchanged (marks it used, for collections
   * that remove what has not been used for a while); false when there is none. For small
   * objects: object storage writes it again.
   */
  touch(key: string): Promise<boolean>;
  /** The local file of a key, when the store is a local directory (read in place, never written). */
  localPath?(key: string): string;
}

export type BlobBody = { file: string; move?: boolean } | { bytes: Buffer | string };

export interface BlobInfo {
  size: number;
  modifiedAt: Date;
}

const KEY = /^[a-z0-9_-][a-z0-9_.-]*(\/[a-z0-9_-][a-z0-9_.-]*)*$/;

/** Throws unless `key` is a safe relative key (no `..`, no leading slash, no upper case). */
export function checkKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`Not a blob key: ${JSON.stringify(key)}`);
  return key;
}

const ANY_CASE_KEY = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/;

/** checkKey with upper-case letters allowed: for stores that are never a case-folding disk (backups in a bucket). */
export function checkAnyCaseKey(key: string): string {
  if (!ANY_CASE_KEY.test(key)) throw new Error(`Not a blob key: ${JSON.stringify(key)}`);
  return key;
}

/** The key of a content-addressed object: `<kind>/<first two hex>/<sha256>`. */
export function hashKey(kind: 'blobs' | 'uploads', sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`Not a sha256 hash: ${sha256}`);
  return `${kind}/${sha256.slice(0, 2)}/${sha256}`;
}
