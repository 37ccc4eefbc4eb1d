import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * The dashboard's only script and style sheet: plain files in ./assets (no build step), read and
 * compressed once, served with a content hash in the URL so browsers keep them for a year.
 */
export const ASSETS = {
  'app.css': 'text/css; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
} as const;
export type AssetName = keyof typeof ASSETS;

export interface Asset {
  body: Buffer;
  gzip: Buffer;
  br: Buffer;
  hash: string;
  type: string;
}

const loaded = new Map<AssetName, Asset>();

export function asset(name: AssetName): Asset {
  let a = loaded.get(name);
  if (!a) {
    const body = readFileSync(join(import.meta.dirname, 'assets', name));
    a = {
      body,
      gzip: gzipSync(body, { level: 9 }),
      br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
      hash: createHash('sha256').update(body).digest('hex').slice(0, 12),
      type: ASSETS[name],
    };
    loaded.set(name, a);
  }
  return a;
}

export const assetUrl = (base: string, name: AssetName) => `${base}/assets/${name}?v=${asset(name).hash}`;
