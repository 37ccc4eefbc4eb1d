import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../../server/features/serving/edge/artifact-reader.ts';
import {
  cacheControlFor,
  IMMUTABLE,
  isHashedName,
  REVALIDATE,
} from '../../../server/features/serving/edge/cache-control.ts';
import { acceptedEncodings, negotiateEncoding } from '../../../server/features/serving/edge/compression.ts';
import { contentTypeOf } from '../../../server/features/serving/edge/content-types.ts';
import { parseRange } from '../../../server/features/serving/edge/range.ts';
import { normalizeHost } from '../../../server/features/serving/edge/resolve-host.ts';
import { isSpaFramework } from '../../../server/features/serving/edge/spa-frameworks.ts';
import { matchPath, requestPath } from '../../../server/features/serving/edge/static.ts';

describe('edge helpers', () => {
  it('recognises content-hashed file names', () => {
    for (const name of [
      '/assets/app-3f2a1b9c.js',
      '/assets/index-DiwrgTda.js',
      '/assets/index-B_x-1aZq.css',
      '/static/js/main.3f2a1b9c.chunk.js',
      '/_next/static/chunks/webpack-59c5c889f52620d6.js',
      '/fonts/inter.a1b2c3d4e5.woff2',
      // esbuild's base32 hashes (Angular), with and without a digit.
      '/main-B744OFW5.js',
      '/chunk-KQWERTYU.js',
      '/styles-ABCDEFGH.css',
      '/server-QWERTYUI.mjs',
    ]) {
      expect(isHashedName(name), name).toBe(true);
    }
    for (const name of [
      '/index.html',
      '/page-3f2a1b9c.html',
      '/application.js',
      '/my-long-component.js',
      '/my-ButtonComponent.js',
      '/jquery-3.7.1.min.js',
      '/report-20240101.pdf',
      '/favicon.ico',
      '/abcdef12',
      '/logo-ABCDEFGH.png',
      '/app-SETTINGSX.js',
      '/chunk-KQWERTY.js',
      '/chunk.KQWERTYU.js',
    ]) {
      expect(isHashedName(name), name).toBe(false);
    }
  });

  it('keeps frameworks’ build folders forever, whatever their names look like', () => {
    for (const path of [
      '/_next/static/chunks/1ruwogm2e1-5s.css',
      '/_next/static/fNKuQW_Jn2z/_buildManifest.js',
      '/_app/immutable/entry/start.js',
      '/_astro/index.css',
      '/_nuxt/entry.js',
      '/_build/assets/client-BOgxrNjj.js',
    ]) {
      expect(cacheControlFor(path), path).toBe(IMMUTABLE);
    }
    for (const path of [
      '/_nuxt/builds/latest.json',
      '/_app/version.json',
      '/next.svg',
      '/static/app.js',
      '/_build/.vite/manifest.json',
    ]) {
      expect(cacheControlFor(path), path).toBe(REVALIDATE);
    }
  });

  it('parses single byte ranges', () => {
    expect(parseRange(undefined, 100)).toBeNull();
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-0', 0)).toBe('unsatisfiable');
    expect(parseRange('bytes=9-3', 100)).toBeNull();
    expect(parseRange('bytes=0-1,4-5', 100)).toBeNull();
    expect(parseRange('items=0-1', 100)).toBeNull();
    expect(parseRange('bytes=-', 100)).toBeNull();
  });

  it('negotiates br over gzip, honouring q=0 and *', () => {
    expect(negotiateEncoding(undefined)).toBeNull();
    expect(negotiateEncoding('gzip, deflate, br')).toBe('br');
    expect(negotiateEncoding('gzip')).toBe('gzip');
    expect(negotiateEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(negotiateEncoding('*')).toBe('br');
    expect(negotiateEncoding('*;q=0')).toBeNull();
    expect(negotiateEncoding('identity')).toBeNull();
    expect(negotiateEncoding('GZIP;Q=1')).toBe('gzip');
  });

  it('parses each Accept-Encoding value once, and still answers right past the values it keeps', () => {
    const browser = acceptedEncodings('gzip, deflate, br, zstd');
    expect(browser).toEqual(['br', 'gzip']);
    expect(acceptedEncodings('gzip, deflate, br, zstd')).toBe(browser);
    // Shared by every request that sends the value: nobody may change it.
    expect(Object.isFrozen(browser)).toBe(true);
    for (let i = 0; i < 200; i++) {
      expect(acceptedEncodings(`gzip;q=${i % 2}, x-${i}`)).toEqual(i % 2 ? ['gzip'] : []);
    }
    expect(acceptedEncodings('gzip, deflate, br, zstd')).toEqual(['br', 'gzip']);
    expect(acceptedEncodings('br;q=0, gzip')).toEqual(['gzip']);
  });

  it('normalises Host headers', () => {
    expect(normalizeHost('Web.LocalHost:3001')).toBe('web.localhost');
    expect(normalizeHost('example.com.')).toBe('example.com');
    expect(normalizeHost('[::1]:3001')).toBe('[::1]');
    expect(normalizeHost(undefined)).toBe('');
  });

  it('maps extensions to content types', () => {
    expect(contentTypeOf('/a/b.HTML')).toEqual({ type: 'text/html; charset=utf-8', compressible: true });
    expect(contentTypeOf('/x.woff2').compressible).toBe(false);
    expect(contentTypeOf('/Makefile').type).toBe('application/octet-stream');
    expect(contentTypeOf('/.env').type).toBe('application/octet-stream');
    // Types the registry knows (mime-db) that a hand-made table had left out.
    expect(contentTypeOf('/subs/en.vtt')).toEqual({ type: 'text/vtt; charset=utf-8', compressible: true });
    expect(contentTypeOf('/config.yaml').type).toBe('text/yaml; charset=utf-8');
    expect(contentTypeOf('/model.glb').type).toBe('model/gltf-binary');
    expect(contentTypeOf('/clip.mov')).toEqual({ type: 'video/quicktime', compressible: false });
    expect(contentTypeOf('/events.ics').type).toBe('text/calendar; charset=utf-8');
    expect(contentTypeOf('/app.mjs').type).toBe('text/javascript; charset=utf-8');
  });

  it('knows single-page app frameworks', () => {
    expect(isSpaFramework('vite')).toBe(true);
    expect(isSpaFramework('create-react-app')).toBe(true);
    expect(isSpaFramework('nextjs')).toBe(false);
    expect(isSpaFramework(null)).toBe(false);
  });

  it('decodes request paths and refuses what cannot be decoded', () => {
    expect(requestPath('/a%20b?x=1#y')).toBe('/a b');
    expect(requestPath('http://web.localhost/x/y?z')).toBe('/x/y');
    expect(requestPath('/%E0%A4%A')).toBeNull();
    expect(requestPath('/a%00b')).toBeNull();
  });

  it('matches only manifest keys, never inherited properties', () => {
    const file = { hash: 'a'.repeat(64), size: 1 };
    const manifest: Manifest = {
      id: 'art_x',
      createdAt: '2026-01-01T00:00:00.000Z',
      totalBytes: 1,
      files: { '/index.html': file },
    };
    expect(matchPath(manifest, '/', false)).toEqual({ path: '/index.html', file, status: 200 });
    expect(matchPath(manifest, '/__proto__', false)).toBeNull();
    expect(matchPath(manifest, '/constructor', false)).toBeNull();
    expect(matchPath(manifest, '/constructor', true)).toEqual({ path: '/index.html', file, status: 200 });
  });
});
