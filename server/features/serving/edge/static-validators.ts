import type { IncomingMessage } from 'node:http';
import { parseRange } from './range.ts';

const etagMatches = (header: string | undefined, hash: string): boolean =>
  !!header &&
  header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === `"${hash}"`;
  });

/** Whether the client's copy is current: If-None-Match, else If-Modified-Since. */
export function isNotModified(req: IncomingMessage, hash: string, lastModified: Date | undefined): boolean {
  const inm = req.headers['if-none-match'];
  // If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
  if (inm !== undefined) return etagMatches(inm, hash);
  const ims = req.headers['if-modified-since'];
  if (!ims || !lastModified) return false;
  const since = Date.parse(ims);
  return !Number.isNaN(since) && Math.floor(lastModified.getTime() / 1000) <= Math.floor(since / 1000);
}

/** The range a request asks for, unless its If-Range no longer holds (then all of it: null). */
export function rangeFor(req: IncomingMessage, hash: string, lastModified: Date | undefined, size: number) {
  const ifRange = req.headers['if-range'];
  if (typeof ifRange === 'string') {
    // If-Range needs a strong match; a validator that does not match means "send it all".
    const fresh = ifRange.startsWith('"')
      ? ifRange === `"${hash}"`
      : !!lastModified && Date.parse(ifRange) >= Math.floor(lastModified.getTime() / 1000) * 1000;
    if (!fresh) return null;
  }
  return parseRange(req.headers.range, size);
}
