/** What the edge needs to know about a file type: its header value and whether compressing it pays. */
export interface ContentType {
  type: string;
  compressible: boolean;
}

const text = (type: string): ContentType => ({ type: `${type}; charset=utf-8`, compressible: true });
const binary = (type: string, compressible = false): ContentType => ({ type, compressible });

const BY_EXTENSION: Record<string, ContentType> = {
  html: text('text/html'),
  htm: text('text/html'),
  css: text('text/css'),
  js: text('text/javascript'),
  mjs: text('text/javascript'),
  cjs: text('text/javascript'),
  json: text('application/json'),
  map: text('application/json'),
  webmanifest: text('application/manifest+json'),
  txt: text('text/plain'),
  md: text('text/markdown'),
  csv: text('text/csv'),
  xml: text('application/xml'),
  rss: text('application/rss+xml'),
  atom: text('application/atom+xml'),
  svg: text('image/svg+xml'),
  wasm: binary('application/wasm', true),
  ico: binary('image/x-icon', true),
  png: binary('image/png'),
  jpg: binary('image/jpeg'),
  jpeg: binary('image/jpeg'),
  gif: binary('image/gif'),
  webp: binary('image/webp'),
  avif: binary('image/avif'),
  woff: binary('font/woff'),
  woff2: binary('font/woff2'),
  ttf: binary('font/ttf', true),
  otf: binary('font/otf', true),
  eot: binary('application/vnd.ms-fontobject', true),
  mp4: binary('video/mp4'),
  webm: binary('video/webm'),
  mp3: binary('audio/mpeg'),
  ogg: binary('audio/ogg'),
  wav: binary('audio/wav'),
  pdf: binary('application/pdf'),
  zip: binary('application/zip'),
  gz: binary('application/gzip'),
};

const UNKNOWN: ContentType = binary('application/octet-stream');

/** Content type of a servable path such as `/assets/app.js`; unknown extensions are octet streams. */
export function contentTypeOf(path: string): ContentType {
  return BY_EXTENSION[extensionOf(path)] ?? UNKNOWN;
}

/** Lowercase extension of the last path segment, without the dot; `''` when there is none. */
export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}
