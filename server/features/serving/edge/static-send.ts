import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { acceptedEncodings } from './compression.ts';
import { DEPLOYMENT_HEADER } from '../../../core/edge-headers.ts';
import { EDGE_PAGES } from './pages.ts';
import type { ByteRange } from './range.ts';
import { headerList, withHeaderRules } from '../../../platform/routing/apply-headers.ts';
import type { HeaderMatch } from '../../../platform/routing/match-rules.ts';
import { sendBytes } from './static-bytes.ts';
import { page } from './static-page.ts';
import { headersNaming, wholeAnswer } from './static-prepared.ts';
import type { ByteCounter, HeaderList, PreparedFile, StaticState, WholeAnswer } from './static-state.ts';
import { isNotModified, rangeFor } from './static-validators.ts';

/**
 * Sends a matched file. Synchronous (returns undefined) when everything it needs is in memory,
 * which is most requests of a warm edge; otherwise returns the promise of the disk work.
 */
export function sendFile(
  s: StaticState,
  req: IncomingMessage,
  res: ServerResponse,
  deploymentId: string,
  p: PreparedFile,
  counter: ByteCounter,
  headerRules: readonly HeaderMatch[] | null = null,
  fetched = false,
): void | Promise<void> {
  const { file, status } = p;
  if (status === 200 && isNotModified(req, file.hash, p.lastModified)) {
    res.writeHead(304, withRules({ [DEPLOYMENT_HEADER]: deploymentId, ...p.fields }, headerRules));
    res.end();
    return;
  }
  // Object storage: a blob not on this edge's disk yet is fetched there first, once.
  const ready = fetched ? undefined : s.artifacts.ensureBlob(file.hash);
  if (ready) {
    return ready.then((found) => {
      if (found) return sendFile(s, req, res, deploymentId, p, counter, headerRules, true);
      counter.bytes += page(req, res, deploymentId, EDGE_PAGES.filesIncomplete(p.path));
    });
  }
  if (status === 200) {
    const range = rangeFor(req, file.hash, p.lastModified, file.size);
    // Ranges address the identity bytes, so only whole answers are compressed.
    if (range) return sendRange(s, req, res, deploymentId, p, counter, headerRules, range);
  }
  const whole = p.compressible ? negotiate(s, req, p) : p.identity;
  const named = headersNaming(whole, deploymentId);
  return sendBytes(
    s,
    req,
    res,
    deploymentId,
    p,
    whole.path,
    whole.size,
    0,
    whole.size - 1,
    status,
    headerRules ? withHeaderRules(named, headerRules) : named,
    counter,
  );
}

/** Answers a Range request: the bytes asked for (206), or 416 when the file has none of them. */
function sendRange(
  s: StaticState,
  req: IncomingMessage,
  res: ServerResponse,
  deploymentId: string,
  p: PreparedFile,
  counter: ByteCounter,
  headerRules: readonly HeaderMatch[] | null,
  range: ByteRange | 'unsatisfiable',
): void | Promise<void> {
  const { file } = p;
  if (range === 'unsatisfiable') {
    res.writeHead(
      416,
      withRules(
        {
          [DEPLOYMENT_HEADER]: deploymentId,
          ...p.fields,
          'Accept-Ranges': 'bytes',
          'Content-Range': `bytes */${file.size}`,
          'Content-Length': 0,
        },
        headerRules,
      ),
    );
    res.end();
    return;
  }
  const { start, end } = range;
  const headers = {
    [DEPLOYMENT_HEADER]: deploymentId,
    ...p.fields,
    'Accept-Ranges': 'bytes',
    'Content-Range': `bytes ${start}-${end}/${file.size}`,
    'Content-Length': end - start + 1,
  };
  const fields = withRules(headers, headerRules);
  return sendBytes(s, req, res, deploymentId, p, p.blob, file.size, start, end, 206, fields, counter);
}

/**
 * The whole answer for the encodings the client accepts: a compressed copy when one is made. A
 * copy not made yet is queued and this answer goes out as it is: compressing never holds a
 * request up.
 */
function negotiate(s: StaticState, req: IncomingMessage, p: PreparedFile): WholeAnswer {
  const { compressed } = s;
  const { hash, size } = p.file;
  const accepted = acceptedEncodings(req.headers['accept-encoding']);
  if (accepted.length === 0) return p.identity;
  for (const encoding of accepted) {
    const copy = compressed.peek(hash, encoding);
    if (copy) {
      const known = p.encoded[encoding];
      if (known?.path === copy.path && known.size === copy.size) return known;
      return (p.encoded[encoding] = wholeAnswer(p, copy.path, copy.size, encoding));
    }
  }
  // gzip first: it is made in a fraction of Brotli's time, so the next request has something.
  for (const encoding of accepted.toReversed()) {
    if (compressed.peek(hash, encoding) === undefined) compressed.prepare(hash, p.blob, size, encoding);
  }
  return p.identity;
}

/** Header fields with the matching `_headers` blocks applied, as a flat list; as they are without any. */
function withRules(
  headers: Record<string, string | number>,
  headerRules: readonly HeaderMatch[] | null,
): OutgoingHttpHeaders | HeaderList {
  return headerRules ? withHeaderRules(headerList(headers), headerRules) : headers;
}
