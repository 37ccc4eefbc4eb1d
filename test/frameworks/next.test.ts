import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { waitFor } from '../helpers/wait-for.ts';
import {
  deployWithoutSettings,
  FRAMEWORK_ENV,
  starterWith,
  startStack,
  timedChunks,
} from './deploy-starter.ts';
import type { Stack } from '../helpers/stack.ts';

/** A 96x96 red PNG (next/image resizes it). */
function png(size: number): Buffer {
  const crc = (buf: Buffer) => {
    let c = ~0;
    for (const b of buf) {
      c ^= b;
      for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
    }
    return ~c >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8;
  header[9] = 2;
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3, Buffer.from([255, 0, 0]))]);
  const raw = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * The default create-next-app starter (App Router, cacheComponents) deployed with no settings, as
 * a server. The starter itself is left as its generator made it but for the one offline edit
 * (test/helpers/starters.ts: next/font/google); the test adds pages of its own that exercise what
 * Next.js promises: per-request rendering, streaming, a route handler, the proxy (middleware),
 * `use cache` revalidated on demand and next/image.
 */
describe('Next.js, the create-next-app starter', { timeout: 600_000 }, () => {
  let s: Stack;
  let repo: Awaited<ReturnType<typeof starterWith>>;
  let d: Deployment;
  let log: string;

  beforeAll(async () => {
    repo = await starterWith('next', {
      // With cacheComponents (the starter's setting), request-time work sits inside <Suspense>.
      'app/now/page.tsx':
        "import { Suspense } from 'react';\nimport { connection } from 'next/server';\n\n" +
        'async function Value() {\n  await connection();\n' +
        '  return <p id="now">{`rendered-${Date.now()}-${Math.random()}`}</p>;\n}\n\n' +
        'export default function Now() {\n  return <Suspense fallback={<p>…</p>}><Value /></Suspense>;\n}\n',
      'app/stream/page.tsx':
        "import { Suspense } from 'react';\nimport { connection } from 'next/server';\n\n" +
        'async function Late() {\n  await connection();\n  await new Promise((r) => setTimeout(r, 1500));\n' +
        '  return <p id="late">late-content</p>;\n}\n\n' +
        'export default function Stream() {\n  return (\n    <main>\n      <p>early-content</p>\n' +
        '      <Suspense fallback={<p>waiting</p>}>\n        <Late />\n      </Suspense>\n    </main>\n  );\n}\n',
      'app/api/hello/route.ts':
        "import { connection } from 'next/server';\n\n" +
        "export async function GET() {\n  await connection();\n  return Response.json({ hello: 'from a route handler', at: Date.now() });\n}\n",
      // A cached value (cacheComponents' ISR) and the route handler that revalidates it on demand.
      'app/isr/page.tsx':
        "import { Suspense } from 'react';\nimport { cacheLife } from 'next/cache';\n\n" +
        "async function stamp() {\n  'use cache';\n  cacheLife('hours');\n  return `isr-${Date.now()}`;\n}\n\n" +
        'async function Stamp() {\n  return <p id="isr">{await stamp()}</p>;\n}\n\n' +
        'export default function Isr() {\n  return <Suspense fallback={<p>…</p>}><Stamp /></Suspense>;\n}\n',
      'app/api/revalidate/route.ts':
        "import { revalidatePath } from 'next/cache';\n\n" +
        "export async function POST() {\n  revalidatePath('/isr');\n  return Response.json({ revalidated: true });\n}\n",
      'proxy.ts':
        "import { NextResponse, type NextRequest } from 'next/server';\n\n" +
        "export function proxy(request: NextRequest) {\n  return NextResponse.redirect(new URL('/now', request.url), 307);\n}\n\n" +
        "export const config = { matcher: '/old' };\n",
      'public/red.png': png(96),
      'public/_redirects': '/from-rules /now 302\n',
    });
    s = await startStack({ env: FRAMEWORK_ENV });
    ({ deployment: d, log } = await deployWithoutSettings(s, 'next-starter', repo.url));
  }, 600_000);
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
    // The stop gives a job still running (the build cache's save after live, 650 MiB) its grace and
    // stops the app; then a Next.js tree is deleted: more than the default 30 s on a loaded machine.
  }, 240_000);

  const get = (path: string, headers?: Record<string, string>) => timedChunks(s, d.url, path, headers);

  it('builds as a server with no settings and goes live', () => {
    expect({ status: d.status, error: d.errorMessage }, log.slice(-4000)).toEqual({
      status: 'live',
      error: null,
    });
    expect(d.framework).toBe('nextjs');
    expect(log).toContain('==> Storing the Next.js server (standalone output)');
    expect(log).toMatch(
      /Storing static assets the edge serves itself: \.next\/static at \/_next\/static, public at \//,
    );
  });

  it('renders per request, and serves the starter’s page', async () => {
    const home = await get('/');
    expect(home.status).toBe(200);
    expect(home.body.toString()).toContain('To get started, edit the');
    const a = (await get('/now')).body.toString();
    const b = (await get('/now')).body.toString();
    const value = (html: string) => /id="now">(rendered-[^<]+)</.exec(html)?.[1];
    expect(value(a)).toMatch(/^rendered-\d+/);
    expect(value(b)).toMatch(/^rendered-\d+/);
    expect(value(a)).not.toBe(value(b));
  });

  it('streams a Suspense boundary as a later chunk, unbuffered', async () => {
    const res = await get('/stream');
    expect(res.status).toBe(200);
    const early = res.chunks.findIndex((c) => c.text.includes('early-content'));
    const late = res.chunks.findIndex((c) => c.text.includes('late-content'));
    expect(early).toBeGreaterThanOrEqual(0);
    expect(late).toBeGreaterThan(early);
    // The fallback reached the client well before the late part was ready (1.5 s later).
    expect(res.chunks[late]!.at - res.chunks[early]!.at).toBeGreaterThan(1000);
  });

  it('answers a route handler and the proxy’s redirect', async () => {
    const api = await get('/api/hello');
    expect(api.status).toBe(200);
    expect(JSON.parse(api.body.toString())).toMatchObject({ hello: 'from a route handler' });
    const old = await get('/old');
    expect(old.status).toBe(307);
    expect(String(old.headers.location)).toMatch(/\/now$/);
  });

  it('serves /_next/static and public/ from the edge, immutable where hashed', async () => {
    const html = (await get('/')).body.toString();
    const asset = /(\/_next\/static\/[^"']+\.(?:js|css))/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const res = await get(asset!);
    expect(res.status).toBe(200);
    expect(String(res.headers['cache-control'])).toContain('immutable');
    // The edge's own answer (its strong ETag of the file's hash), not the app's.
    expect(String(res.headers.etag)).toMatch(/^"[0-9a-f]{64}"$/);
    const svg = await get('/next.svg');
    expect(svg.status).toBe(200);
    expect(String(svg.headers['content-type'])).toContain('image/svg+xml');
  });

  it('applies public/_redirects at the edge, and never serves the file', async () => {
    const res = await get('/from-rules');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/now');
    expect((await get('/_redirects')).status).toBe(404);
    expect(log).toContain('Routing rules: 1 redirect, 0 header rules from _redirects');
  });

  it('resizes an image with next/image (sharp)', async () => {
    const res = await get('/_next/image?url=%2Fred.png&w=64&q=75', { accept: 'image/webp,*/*' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/webp');
    expect(res.body.subarray(0, 4).toString()).toBe('RIFF');
  });

  it('keeps a cached value until it is revalidated, then serves the new one', async () => {
    const value = async () => /id="isr">(isr-\d+)</.exec((await get('/isr')).body.toString())?.[1];
    const first = await value();
    expect(first).toMatch(/^isr-\d+$/);
    expect(await value()).toBe(first);
    const revalidated = await timedChunks(s, d.url, '/api/revalidate', {}, 'POST');
    expect({ status: revalidated.status, body: revalidated.body.toString() }).toEqual({
      status: 200,
      body: '{"revalidated":true}',
    });
    const next = await waitFor(
      'the revalidated value',
      async () => {
        const v = await value();
        return v && v !== first ? v : null;
      },
      30_000,
      250,
    );
    expect(Number(next.slice(4))).toBeGreaterThan(Number(first!.slice(4)));
    expect(await value()).toBe(next);
  });
});
