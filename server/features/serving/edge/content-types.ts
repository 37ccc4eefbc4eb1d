import { LRUCache } from 'lru-cache';
import { charset, lookup } from 'mime-types';
import db from 'mime-db';

/** What the edge needs to know about a file type: its header value and whether compressing it pays. */
export interface ContentType {
  type: string;
  compressible: boolean;
}

/**
 * Where the registry (mime-db, through mime-types) is not what browsers expect today: JavaScript
 * is `text/javascript` (RFC 9239), and SVG is text that compresses well.
 */
const PREFERRED: Record<string, string> = {
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
};

const UNKNOWN: ContentType = { type: 'application/octet-stream', compressible: false };
/** By extension; only the registry's (about 1,200) are kept, so the bound is never reached in practice. */
const cache = new LRUCache<string, ContentType>({ max: 2_000 });

/** Content type of a servable path such as `/assets/app.js`; unknown extensions are octet streams. */
export function contentTypeOf(path: string): ContentType {
  const ext = extensionOf(path);
  if (!ext) return UNKNOWN;
  let known = cache.get(ext);
  if (!known) {
    const type = PREFERRED[ext] ?? lookup(ext);
    if (!type) return UNKNOWN;
    const text = charset(type) === 'UTF-8' || type === 'image/svg+xml';
    known = {
      type: text ? `${type}; charset=utf-8` : type,
      compressible: db[type]?.compressible ?? type.startsWith('text/'),
    };
    cache.set(ext, known);
  }
  return known;
}

/** Lowercase extension of the last path segment, without the dot; `''` when there is none. */
export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}
