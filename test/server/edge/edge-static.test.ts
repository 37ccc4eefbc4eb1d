import { createHash, randomBytes } from 'node:crypto';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostResolver, type HostResolver } from '../../../server/features/serving/edge/resolve-host.ts';
import { createEdgeServer, type RequestRecord } from '../../../server/features/serving/edge/server.ts';
import {
  createArtifactReader,
  type ArtifactReader,
} from '../../../server/features/serving/edge/artifact-reader.ts';
import { hashKey, type BlobStore } from '../../../server/platform/storage/blob-store.ts';
import { createDiskCache } from '../../../server/platform/storage/local-files.ts';
import { createS3BlobStore } from '../../../server/platform/storage/s3-blob-store.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../../helpers/s3-server.ts';
import { newId } from '../../../server/core/ids.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  edgeRequest,
  insertDeployment,
  insertProject,
  listen,
  storeSite,
  setProduction,
} from '../../helpers/edge.ts';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

const INDEX = '<!doctype html><h1>home</h1>';
const ABOUT = '<!doctype html><h1>about</h1>';
const DOCS = '<!doctype html><h1>docs</h1>';
const NOT_FOUND = '<!doctype html><h1>our own 404</h1>';
const APP_JS = `console.log(${JSON.stringify('hello edge '.repeat(400))});\n`;
const STYLES = `body { color: #333; }\n${'.c { margin: 0 auto; padding: 1px; }\n'.repeat(80)}`;
const PNG = Buffer.from([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  ...Array.from({ length: 2000 }, (_, i) => i % 256),
]);
const TEXT = 'abcdefghijklmnopqrstuvwxyz'.repeat(10);
/** Over the in-memory limit, so it is streamed from disk. */
const BIG = randomBytes(300_000);

let s3: S3Server | undefined;
beforeAll(async () => {
  if (!s3ServerMissing) s3 = await startS3Server();
});
afterAll(async () => {
  await s3?.stop();
});

/**
 * The same suite with the artifacts in the local directory (read in place) and in object storage
 * (s3rver; read through the edge's disk cache).
 */
describe.each([
  ['the artifacts directory', ''],
  ['object storage', s3ServerMissing],
])('edge: static deployments, artifacts in %s%s', (_where, skip) => {
  if (skip) {
    it.skip('needs s3rver', () => {});
    return;
  }
  const remote = _where === 'object storage';
  let t: TestApp;
  /** Where artifacts are written. */
  let store: string | BlobStore;
  /** The edge's own folder: the artifacts directory, or its disk cache's. */
  let local: string;
  let edge: Server;
  let port: number;
  let resolver: HostResolver;
  const records: RequestRecord[] = [];
  let site: { projectId: string; deploymentId: string; deploymentHost: string };
  let spa: { deploymentHost: string };
  let artifactId: string;

  const get = (host: string, path: string, opts?: Parameters<typeof edgeRequest>[3]) =>
    edgeRequest(port, `${host}:${port}`, path, opts);

  beforeAll(async () => {
    t = await createTestApp();
    const alice = await t.user('alice@example.com');
    const root = t.deps.config.artifactsDir;
    let artifacts: ArtifactReader | undefined;
    if (remote) {
      store = createS3BlobStore(s3!.config(`edge-${randomBytes(4).toString('hex')}`));
      local = join(t.deps.config.dataDir, 'edge-cache');
      artifacts = createArtifactReader(
        await createDiskCache(store, { dir: join(local, 'objects'), maxBytes: 64 * 1024 * 1024 }),
      );
    } else {
      store = root;
      local = root;
    }
    artifactId = await storeSite(store, {
      'index.html': INDEX,
      'about.html': ABOUT,
      'docs/index.html': DOCS,
      '404.html': NOT_FOUND,
      'assets/app-3f2a1b9c.js': APP_JS,
      'styles.css': STYLES,
      'logo.png': PNG,
      'letters.txt': TEXT,
      'empty.txt': '',
      'video/big.bin': BIG,
      '.env': 'DATABASE_PASSWORD=hunter2',
      '.env.production': 'API_KEY=secret',
      'docs/.git/config': '[remote "origin"]\n  url = https://x-access-token:ghp_leak@github.com/o/r.git',
      '.git/HEAD': 'ref: refs/heads/main',
      '.well-known/security.txt': 'Contact: mailto:security@example.com',
      '.environment.html': '<h1>a page about the environment</h1>',
    });
    const web = await insertProject(t, alice.orgId, { name: 'web' });
    const live = await insertDeployment(t, web.id, { artifact_id: artifactId });
    await setProduction(t, web.id, live.id);
    site = { projectId: web.id, deploymentId: live.id, deploymentHost: live.host };

    const spaArtifact = await storeSite(store, { 'index.html': '<div id="app"></div>', 'main.js': 'boot()' });
    const app = await insertProject(t, alice.orgId, { name: 'dash', framework: 'vite' });
    const spaDeployment = await insertDeployment(t, app.id, { artifact_id: spaArtifact });
    spa = { deploymentHost: spaDeployment.host };

    resolver = createHostResolver(t.deps, { ttlMs: 0 });
    edge = createEdgeServer({
      resolver,
      artifactsRoot: local,
      ...(artifacts ? { artifacts } : {}),
      onRequest: (r) => records.push(r),
    });
    port = await listen(edge);
  });
  afterAll(async () => {
    await new Promise((r) => edge.close(r));
    await t.close();
  });

  describe('routing by Host', () => {
    it('serves a deployment by its own host and names it in X-Slipway-Deployment', async () => {
      const res = await get(`${site.deploymentHost}.localhost`, '/');
      expect(res.status).toBe(200);
      expect(res.text).toBe(INDEX);
      expect(res.headers['x-slipway-deployment']).toBe(site.deploymentId);
    });

    it('serves the production deployment at the project host, in any case and without a port', async () => {
      const res = await get('WEB.localhost', '/about');
      expect(res.status).toBe(200);
      expect(res.text).toBe(ABOUT);
      expect(res.headers['x-slipway-deployment']).toBe(site.deploymentId);
      const noPort = await edgeRequest(port, 'web.localhost', '/');
      expect(noPort.text).toBe(INDEX);
    });

    it('serves production at a verified custom domain, not at a pending one', async () => {
      const now = t.deps.clock.now().toISOString();
      for (const [domain, status] of [
        ['www.example.com', 'verified'],
        ['pending.example.com', 'pending'],
      ] as const) {
        await t.deps.db
          .insertInto('domains')
          .values({
            id: newId('dom'),
            project_id: site.projectId,
            domain,
            status,
            ssl_status: 'pending',
            ssl_error: null,
            verification_token: 'x',
            verified_at: status === 'verified' ? now : null,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
      const verified = await get('www.example.com', '/');
      expect(verified.status).toBe(200);
      expect(verified.text).toBe(INDEX);
      const pending = await get('pending.example.com', '/');
      expect(pending.status).toBe(404);
      expect(pending.text).toContain('Nothing is deployed at pending.example.com');
    });

    it('answers an unknown host with a 404 page naming it, escaped', async () => {
      const res = await get('nothing-here.localhost', '/');
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.text).toContain('Nothing is deployed at nothing-here.localhost');
      expect(res.headers['x-slipway-deployment']).toBeUndefined();
      const evil = await edgeRequest(port, '<script>.example.com', '/');
      expect(evil.status).toBe(404);
      expect(evil.text).toContain('&lt;script&gt;.example.com');
      expect(evil.text).not.toContain('<script>');
    });

    it('answers a suspended project with 503, and a deleted one as unknown', async () => {
      const alice = await t.user('alice@example.com');
      const artifact = await storeSite(store, { 'index.html': 'x' });
      const p = await insertProject(t, alice.orgId, { name: 'sleepy', status: 'suspended' });
      const d = await insertDeployment(t, p.id, { artifact_id: artifact });
      await setProduction(t, p.id, d.id);
      for (const host of ['sleepy.localhost', `${d.host}.localhost`]) {
        const res = await get(host, '/');
        expect(res.status, host).toBe(503);
        expect(res.text).toContain('Project suspended');
      }
      await t.deps.db
        .updateTable('projects')
        .set({ status: 'deleted', deleted_at: t.deps.clock.now().toISOString() })
        .where('id', '=', p.id)
        .execute();
      for (const host of ['sleepy.localhost', `${d.host}.localhost`]) {
        const res = await get(host, '/');
        expect(res.status, host).toBe(404);
        expect(res.text).toContain(`Nothing is deployed at ${host}`);
      }
    });

    it('says when a deployment is building or failed, and when there is no production yet', async () => {
      const alice = await t.user('alice@example.com');
      const p = await insertProject(t, alice.orgId, { name: 'fresh' });
      const building = await insertDeployment(t, p.id, { status: 'building' });
      const failed = await insertDeployment(t, p.id, { status: 'failed' });
      const b = await get(`${building.host}.localhost`, '/');
      expect(b.status).toBe(503);
      expect(b.headers['retry-after']).toBe('5');
      expect(b.text).toContain(`Deployment ${building.id} is building`);
      expect(b.headers['x-slipway-deployment']).toBe(building.id);
      const f = await get(`${failed.host}.localhost`, '/');
      expect(f.status).toBe(404);
      expect(f.text).toContain('Deployment failed');
      const none = await get('fresh.localhost', '/');
      expect(none.status).toBe(404);
      expect(none.text).toContain('No production deployment yet');
    });

    it('serves a deploying deployment, so the health check can reach it', async () => {
      const alice = await t.user('alice@example.com');
      const p = await insertProject(t, alice.orgId);
      const d = await insertDeployment(t, p.id, { status: 'deploying', artifact_id: artifactId });
      const res = await get(`${d.host}.localhost`, '/');
      expect(res.status).toBe(200);
      expect(res.text).toBe(INDEX);
    });

    it('serves a rollback from the artifact of the build it reuses', async () => {
      const rollback = await insertDeployment(t, site.projectId, { source_deployment_id: site.deploymentId });
      const res = await get(`${rollback.host}.localhost`, '/docs/');
      expect(res.status).toBe(200);
      expect(res.text).toBe(DOCS);
      expect(res.headers['x-slipway-deployment']).toBe(rollback.id);
    });
  });

  describe('files', () => {
    it('sends content types, with a charset for text', async () => {
      const cases: [string, string][] = [
        ['/', 'text/html; charset=utf-8'],
        ['/assets/app-3f2a1b9c.js', 'text/javascript; charset=utf-8'],
        ['/styles.css', 'text/css; charset=utf-8'],
        ['/logo.png', 'image/png'],
        ['/letters.txt', 'text/plain; charset=utf-8'],
      ];
      for (const [path, type] of cases) {
        const res = await get('web.localhost', path);
        expect(res.status, path).toBe(200);
        expect(res.headers['content-type'], path).toBe(type);
      }
      const png = await get('web.localhost', '/logo.png');
      expect(png.body.equals(PNG)).toBe(true);
      expect(png.headers['content-length']).toBe(String(PNG.length));
    });

    it('resolves clean paths: /about, /docs, /docs/', async () => {
      for (const [path, body] of [
        ['/about', ABOUT],
        ['/about.html', ABOUT],
        ['/docs', DOCS],
        ['/docs/', DOCS],
        ['/index.html', INDEX],
      ]) {
        const res = await get('web.localhost', path!);
        expect(res.status, path).toBe(200);
        expect(res.text, path).toBe(body);
      }
    });

    it('never publishes .git or .env files, at any depth, and still serves other dotfiles', async () => {
      for (const path of [
        '/.env',
        '/.env.production',
        '/.ENV',
        '/%2eenv',
        '/docs/.git/config',
        '/.git/HEAD',
        '/.git/',
        '/.git',
      ]) {
        const res = await get('web.localhost', path);
        expect(res.status, path).toBe(404);
        expect(res.text, path).toBe(NOT_FOUND);
      }
      expect((await get('web.localhost', '/.well-known/security.txt')).status).toBe(200);
      expect((await get('web.localhost', '/.environment')).text).toBe(
        '<h1>a page about the environment</h1>',
      );
    });

    it('answers an unknown path with the app’s own 404.html and status 404', async () => {
      const res = await get('web.localhost', '/no/such/page');
      expect(res.status).toBe(404);
      expect(res.text).toBe(NOT_FOUND);
      expect(res.headers['cache-control']).toBe('public, max-age=0, must-revalidate');
    });

    it('falls back to index.html for single-page apps, but not for missing files with an extension', async () => {
      const deep = await get(`${spa.deploymentHost}.localhost`, '/dashboard/settings?tab=2');
      expect(deep.status).toBe(200);
      expect(deep.text).toBe('<div id="app"></div>');
      const js = await get(`${spa.deploymentHost}.localhost`, '/missing.js');
      expect(js.status).toBe(404);
      expect(js.text).toContain('This deployment has no page at /missing.js');
    });

    it('sends ETag and answers If-None-Match with 304', async () => {
      const first = await get('web.localhost', '/about');
      expect(first.headers.etag).toBe(`"${sha(ABOUT)}"`);
      expect(first.headers['last-modified']).toMatch(/GMT$/);
      for (const inm of [
        first.headers.etag!,
        `W/${first.headers.etag!}`,
        `"other", ${first.headers.etag!}`,
        '*',
      ]) {
        const again = await get('web.localhost', '/about', { headers: { 'if-none-match': inm } });
        expect(again.status, inm).toBe(304);
        expect(again.body.length).toBe(0);
        expect(again.headers.etag).toBe(first.headers.etag);
      }
      const changed = await get('web.localhost', '/about', { headers: { 'if-none-match': '"stale"' } });
      expect(changed.status).toBe(200);
      const since = await get('web.localhost', '/about', {
        headers: { 'if-modified-since': first.headers['last-modified']! },
      });
      expect(since.status).toBe(304);
    });

    it('serves a single byte range with 206, and 416 when it cannot be satisfied', async () => {
      const head = await get('web.localhost', '/letters.txt', { headers: { range: 'bytes=0-9' } });
      expect(head.status).toBe(206);
      expect(head.text).toBe('abcdefghij');
      expect(head.headers['content-range']).toBe(`bytes 0-9/${TEXT.length}`);
      expect(head.headers['content-length']).toBe('10');
      const tail = await get('web.localhost', '/letters.txt', { headers: { range: 'bytes=-4' } });
      expect(tail.status).toBe(206);
      expect(tail.text).toBe('wxyz');
      const open = await get('web.localhost', '/letters.txt', {
        headers: { range: `bytes=${TEXT.length - 3}-` },
      });
      expect(open.text).toBe('xyz');
      const bad = await get('web.localhost', '/letters.txt', { headers: { range: `bytes=${TEXT.length}-` } });
      expect(bad.status).toBe(416);
      expect(bad.headers['content-range']).toBe(`bytes */${TEXT.length}`);
      expect(bad.body.length).toBe(0);
      const stale = await get('web.localhost', '/letters.txt', {
        headers: { range: 'bytes=0-9', 'if-range': '"stale"' },
      });
      expect(stale.status).toBe(200);
      expect(stale.text).toBe(TEXT);
      const multi = await get('web.localhost', '/letters.txt', { headers: { range: 'bytes=0-1,5-6' } });
      expect(multi.status).toBe(200);
      expect(multi.headers['accept-ranges']).toBe('bytes');
    });

    it('compresses with br or gzip as the client accepts, once, in the background, and caches it on disk', async () => {
      const path = '/assets/app-3f2a1b9c.js';
      // The first request does not wait for compression: it gets the file as it is.
      const first = await get('web.localhost', path, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(first.status).toBe(200);
      expect(first.headers['content-encoding']).toBeUndefined();
      expect(first.headers.vary).toBe('Accept-Encoding');
      expect(first.headers.etag).toBe(`"${sha(APP_JS)}"`);
      expect(first.text).toBe(APP_JS);
      let br = first;
      await waitFor('the Brotli copy', async () => {
        br = await get('web.localhost', path, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
        return br.headers['content-encoding'] === 'br';
      });
      expect(br.status).toBe(200);
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.vary).toBe('Accept-Encoding');
      expect(br.headers.etag).toBe(`W/"${sha(APP_JS)}"`);
      expect(br.body.length).toBeLessThan(APP_JS.length);
      expect(brotliDecompressSync(br.body).toString()).toBe(APP_JS);
      const onDisk = join(local, 'compressed', `${sha(APP_JS)}.br`);
      expect(existsSync(onDisk)).toBe(true);

      const gz = await get('web.localhost', path, { headers: { 'accept-encoding': 'gzip;q=1, br;q=0' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body).toString()).toBe(APP_JS);
      expect(gz.headers['content-length']).toBe(String(gz.body.length));

      const plain = await get('web.localhost', path);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.text).toBe(APP_JS);
      expect(plain.headers.vary).toBe('Accept-Encoding');

      // Compressed once: a second request reuses the copy on disk.
      const { mtimeMs } = statSync(onDisk);
      const again = await get('web.localhost', path, { headers: { 'accept-encoding': 'br' } });
      expect(brotliDecompressSync(again.body).toString()).toBe(APP_JS);
      expect(statSync(onDisk).mtimeMs).toBe(mtimeMs);

      const small = await get('web.localhost', '/about', { headers: { 'accept-encoding': 'br, gzip' } });
      expect(small.headers['content-encoding']).toBeUndefined();
      const png = await get('web.localhost', '/logo.png', { headers: { 'accept-encoding': 'br, gzip' } });
      expect(png.headers['content-encoding']).toBeUndefined();
      expect(png.headers.vary).toBeUndefined();
      // A range is always of the identity bytes.
      const ranged = await get('web.localhost', path, {
        headers: { 'accept-encoding': 'br', range: 'bytes=0-10' },
      });
      expect(ranged.status).toBe(206);
      expect(ranged.headers['content-encoding']).toBeUndefined();
      expect(ranged.text).toBe(APP_JS.slice(0, 11));
    });

    it('caches hashed asset names for a year and revalidates everything else', async () => {
      const asset = await get('web.localhost', '/assets/app-3f2a1b9c.js');
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      for (const path of ['/', '/styles.css', '/logo.png', '/about']) {
        const res = await get('web.localhost', path);
        expect(res.headers['cache-control'], path).toBe('public, max-age=0, must-revalidate');
      }
    });

    it('answers HEAD with the headers of GET and no body', async () => {
      const res = await get('web.localhost', '/styles.css', { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(STYLES)));
      expect(res.headers['content-type']).toBe('text/css; charset=utf-8');
      expect(res.body.length).toBe(0);
      const missing = await get('nowhere.localhost', '/', { method: 'HEAD' });
      expect(missing.status).toBe(404);
      expect(missing.body.length).toBe(0);
    });

    it('streams a large file from disk, whole, in part or just its headers', async () => {
      const whole = await get('web.localhost', '/video/big.bin');
      expect(whole.status).toBe(200);
      expect(whole.headers['content-type']).toBe('application/octet-stream');
      expect(whole.body.equals(BIG)).toBe(true);
      const part = await get('web.localhost', '/video/big.bin', {
        headers: { range: 'bytes=100000-100009' },
      });
      expect(part.status).toBe(206);
      expect(part.body.equals(BIG.subarray(100000, 100010))).toBe(true);
      const head = await get('web.localhost', '/video/big.bin', { method: 'HEAD' });
      expect(head.headers['content-length']).toBe(String(BIG.length));
      expect(head.body.length).toBe(0);
    });

    it('serves an empty file', async () => {
      const res = await get('web.localhost', '/empty.txt');
      expect(res.status).toBe(200);
      expect(res.headers['content-length']).toBe('0');
      expect(res.body.length).toBe(0);
    });

    it('refuses methods other than GET and HEAD with 405', async () => {
      for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
        const res = await get('web.localhost', '/', { method, body: method === 'POST' ? 'x=1' : undefined });
        expect(res.status, method).toBe(405);
        expect(res.headers.allow).toBe('GET, HEAD');
      }
    });

    it('never serves anything outside the manifest', async () => {
      // A file beside the artifacts that a traversal would reach.
      writeFileSync(join(local, 'secret.txt'), 'top secret');
      for (const path of [
        '/../../../../etc/passwd',
        '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
        '/..%2f..%2fsecret.txt',
        '/assets/..%2f..%2f..%2fsecret.txt',
        '/%2e%2e%5c%2e%2e%5csecret.txt',
        '//etc/passwd',
      ]) {
        const res = await get('web.localhost', path);
        expect(res.status, path).toBe(404);
        expect(res.text, path).toBe(NOT_FOUND);
      }
      const bad = await get('web.localhost', '/%E0%A4%A');
      expect(bad.status).toBe(400);
      const nul = await get('web.localhost', '/index.html%00.png');
      expect(nul.status).toBe(400);
    });

    it('refuses a request with two Host headers (400, RFC 9112), and serves the same with one', async () => {
      /** Sends `head` as written and reads the whole answer (`Connection: close`: the edge ends it). */
      const raw = (head: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => socket.write(head));
          let text = '';
          socket.setEncoding('utf8');
          socket.on('data', (c: string) => (text += c));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        });
      const other = `other.localhost:${port}`;
      const mine = `web.localhost:${port}`;
      const before = records.length;
      for (const [a, b] of [
        ['Host', 'Host'],
        ['host', 'HOST'],
      ]) {
        const answer = await raw(
          `GET /about HTTP/1.1\r\n${a}: ${mine}\r\n${b}: ${other}\r\nConnection: close\r\n\r\n`,
        );
        expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
        expect(answer).toContain('more than one Host header');
        expect(answer).not.toContain(ABOUT);
      }
      await waitFor('the refusals recorded', () => records.length >= before + 2);
      expect(records.slice(before).map((r) => [r.status, r.projectId])).toEqual([
        [400, null],
        [400, null],
      ]);
      // An upgrade the same.
      const upgrade = await raw(
        `GET / HTTP/1.1\r\nHost: ${mine}\r\nHost: ${other}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
      );
      expect(upgrade).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      // One Host: served.
      const one = await raw(`GET /about HTTP/1.1\r\nHost: ${mine}\r\nConnection: close\r\n\r\n`);
      expect(one).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(one).toContain(ABOUT);
    });

    it('answers 503 when the artifact is missing and 500 when a blob is', async () => {
      const alice = await t.user('alice@example.com');
      const p = await insertProject(t, alice.orgId);
      const noArtifact = await insertDeployment(t, p.id, { artifact_id: 'art_doesnotexist00000000' });
      const a = await get(`${noArtifact.host}.localhost`, '/');
      expect(a.status).toBe(503);
      expect(a.text).toContain('Deployment files not available');

      const broken = await storeSite(store, { 'index.html': 'soon gone, unique 7f3e' });
      const gone = hashKey('blobs', sha('soon gone, unique 7f3e'));
      if (typeof store === 'string') rmSync(join(store, gone));
      else await store.delete(gone);
      const d = await insertDeployment(t, p.id, { artifact_id: broken });
      const b = await get(`${d.host}.localhost`, '/');
      expect(b.status).toBe(500);
      expect(b.text).toContain('Deployment files are incomplete');
    });

    it('never serves a server app’s files as static ones, and refuses a runtime it cannot read', async () => {
      const alice = await t.user('alice@example.com');
      const p = await insertProject(t, alice.orgId);
      const node = await insertDeployment(t, p.id, {
        artifact_id: artifactId,
        runtime: JSON.stringify({ kind: 'node', spa: false, startCommand: 'node server.js' }),
      });
      const res = await get(`${node.host}.localhost`, '/index.html');
      expect(res.status).toBe(503);
      expect(res.text).toContain('The app is not running');
      expect(res.text).not.toContain('home');

      const garbled = await insertDeployment(t, p.id, { artifact_id: artifactId, runtime: '{"kind":"php"}' });
      const bad = await get(`${garbled.host}.localhost`, '/index.html');
      expect(bad.status).toBe(500);
      expect(bad.text).toContain('Edge error');
    });

    it('takes the single-page app setting from the build’s runtime over the framework', async () => {
      const alice = await t.user('alice@example.com');
      const p = await insertProject(t, alice.orgId, { framework: null });
      const d = await insertDeployment(t, p.id, {
        artifact_id: artifactId,
        runtime: JSON.stringify({ kind: 'static', spa: true }),
      });
      const res = await get(`${d.host}.localhost`, '/some/client/route');
      expect(res.status).toBe(200);
      expect(res.text).toBe(INDEX);
      const vite = await insertProject(t, alice.orgId, { framework: 'vite' });
      const notSpa = await insertDeployment(t, vite.id, {
        artifact_id: artifactId,
        runtime: JSON.stringify({ kind: 'static', spa: false }),
      });
      expect((await get(`${notSpa.host}.localhost`, '/some/client/route')).text).toBe(NOT_FOUND);
    });
  });

  it('reports every answered request to onRequest', async () => {
    records.length = 0;
    const res = await get('web.localhost', '/styles.css');
    await get('unknown-host.localhost', '/');
    await expect.poll(() => records.length).toBe(2);
    expect(records[0]).toMatchObject({
      projectId: site.projectId,
      deploymentId: site.deploymentId,
      host: 'web.localhost',
      status: 200,
      bytes: res.body.length,
    });
    expect(records[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(records[1]).toMatchObject({
      projectId: null,
      deploymentId: null,
      host: 'unknown-host.localhost',
      status: 404,
    });
    expect(records[1]!.bytes).toBeGreaterThan(0);
  });

  it('caches host answers for ttlMs until invalidate()', async () => {
    let now = 1_000_000;
    const cached = createHostResolver(t.deps, { ttlMs: 1000, now: () => now });
    const alice = await t.user('alice@example.com');
    const p = await insertProject(t, alice.orgId, { name: 'switchy' });
    const one = await insertDeployment(t, p.id);
    const two = await insertDeployment(t, p.id);
    const current = async () => {
      const r = await cached.resolve('switchy.localhost:3001');
      return r.kind === 'target' ? r.target.deploymentId : r.kind;
    };
    await setProduction(t, p.id, one.id);
    expect(await current()).toBe(one.id);
    await setProduction(t, p.id, two.id);
    // An answer lives between 90% and 100% of ttlMs (spread at random).
    now += 899;
    expect(await current()).toBe(one.id);
    now += 102;
    expect(await current()).toBe(two.id);
    await setProduction(t, p.id, one.id);
    expect(await current()).toBe(two.id);
    cached.invalidate();
    expect(await current()).toBe(one.id);
  });

  it('peek gives the cached answer without waiting, only while it is fresh', async () => {
    let now = 1_000_000;
    const cached = createHostResolver(t.deps, { ttlMs: 1000, now: () => now });
    const alice = await t.user('alice@example.com');
    const p = await insertProject(t, alice.orgId, { name: 'peeky' });
    const d = await insertDeployment(t, p.id);
    await setProduction(t, p.id, d.id);
    expect(cached.peek('peeky.localhost')).toBeUndefined();
    const pending = cached.resolve('Peeky.localhost:3001');
    // Still being looked up: nothing to give yet.
    expect(cached.peek('peeky.localhost')).toBeUndefined();
    const resolved = await pending;
    expect(resolved.kind).toBe('target');
    expect(cached.peek('PEEKY.localhost:80')).toEqual(resolved);
    expect(cached.peek('')).toEqual({ kind: 'unknown' });
    now += 1001;
    expect(cached.peek('peeky.localhost')).toBeUndefined();
  });
});
