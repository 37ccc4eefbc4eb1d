/** A byte range, both ends inclusive, as Content-Range writes it. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parses a Range header against a file of `size` bytes. Returns the one range to send,
 * `'unsatisfiable'` (answer 416), or null to ignore the header and send the whole file: we do not
 * serve multipart ranges, which RFC 9110 allows a server to decline that way, and a header that
 * does not parse is ignored likewise.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return null;
  const [, first, last] = m as unknown as [string, string, string];
  if (first === '' && last === '') return null;
  if (first === '') {
    // A suffix range: the last N bytes.
    const n = Number(last);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
