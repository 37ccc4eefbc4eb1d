import type { Manifest } from './artifact-reader.ts';
import { cacheControlFor, REVALIDATE } from './cache-control.ts';
import { MAX_COMPRESS_BYTES, MIN_COMPRESS_BYTES, type Encoding } from './compression.ts';
import { contentTypeOf } from './content-types.ts';
import { DEPLOYMENT_HEADER } from '../../../core/edge-headers.ts';
import type { Match } from './static-paths.ts';
import type { HeaderList, PreparedFile, StaticState, WholeAnswer } from './static-state.ts';

/** The prepared file of a match, prepared on its first request. */
export function prepared(s: StaticState, manifest: Manifest, match: Match): PreparedFile {
  let byStatus = s.preparedFiles.get(manifest);
  if (!byStatus) {
    byStatus = { 200: new Map(), 404: new Map() };
    s.preparedFiles.set(manifest, byStatus);
  }
  const byPath = byStatus[match.status];
  let file = byPath.get(match.path);
  if (!file) {
    file = prepareFile(match, manifest, s.artifacts.blobPath(match.file.hash));
    byPath.set(match.path, file);
  }
  return file;
}

/** A whole answer's fields, the deployment's name first. Node only reads the list it is given. */
export function headersNaming(whole: WholeAnswer, deploymentId: string): HeaderList {
  if (whole.named?.deploymentId === deploymentId) return whole.named.headers;
  const headers = [DEPLOYMENT_HEADER, deploymentId, ...whole.headers];
  whole.named = { deploymentId, headers };
  return headers;
}

function prepareFile(match: Match, manifest: Manifest, blob: string): PreparedFile {
  const { path, file, status } = match;
  const type = contentTypeOf(path);
  const lastModified = lastModifiedOf(manifest);
  const fields: Record<string, string> = {
    'Content-Type': type.type,
    ETag: `"${file.hash}"`,
    'Cache-Control': status === 200 ? cacheControlFor(path) : REVALIDATE,
  };
  if (lastModified) fields['Last-Modified'] = lastModified.header;
  const compressible =
    type.compressible && file.size >= MIN_COMPRESS_BYTES && file.size <= MAX_COMPRESS_BYTES;
  if (compressible) fields.Vary = 'Accept-Encoding';
  const p = { path, file, status, blob, compressible, lastModified: lastModified?.date, fields, encoded: {} };
  return { ...p, identity: wholeAnswer(p, blob, file.size, null) };
}

/** The header fields of a whole answer: the file's, then Accept-Ranges, Content-Encoding, Content-Length. */
export function wholeAnswer(
  p: Pick<PreparedFile, 'file' | 'status' | 'fields'>,
  path: string,
  size: number,
  encoding: Encoding | null,
): WholeAnswer {
  const fields: Record<string, string> = { ...p.fields };
  if (p.status === 200) fields['Accept-Ranges'] = 'bytes';
  if (encoding) {
    fields['Content-Encoding'] = encoding;
    // Weak: the bytes differ from the identity representation that the strong tag names.
    fields.ETag = `W/"${p.file.hash}"`;
  }
  fields['Content-Length'] = String(size);
  return { path, size, headers: Object.entries(fields).flat() };
}

/** A manifest's creation time as a date and as the Last-Modified value; null when it is not a date. */
const lastModifiedCache = new WeakMap<Manifest, { date: Date; header: string } | null>();
function lastModifiedOf(manifest: Manifest): { date: Date; header: string } | null {
  let value = lastModifiedCache.get(manifest);
  if (value === undefined) {
    const date = new Date(manifest.createdAt);
    value = Number.isNaN(date.getTime()) ? null : { date, header: date.toUTCString() };
    lastModifiedCache.set(manifest, value);
  }
  return value;
}
