import { createHash } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createArtifactStore } from '../../../server/features/builds/artifacts.ts';
import { createArtifactReader } from '../../../server/features/serving/edge/artifact-reader.ts';
import { createCompressedCache } from '../../../server/features/serving/edge/compression.ts';
import type { Target } from '../../../server/features/serving/edge/resolve-host.ts';
import { createStaticServer } from '../../../server/features/serving/edge/static.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const limits = { maxBytes: 1024 * 1024, maxFiles: 100 };

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Answered within the request's own turn: from the prepared fields and the bytes in memory. */
  atOnce: boolean;
}

/**
 * A static server over one artifacts root, serving whichever target the request's Host names;
 * each answer says whether it was the synchronous (warm) one.
 */
async function edgeFor(root: string, targets: Record<string, Target>) {
  const compressed = createCompressedCache(root);
  const files = createStaticServer({ artifacts: createArtifactReader(root), compressed });
  const atOnce: boolean[] = [];
  const server = createServer((req, res) => {
    const pending = files.serve(req, res, targets[req.headers.host!]!, { bytes: 0 });
    atOnce.push(pending === undefined && res.writableEnded);
    void pending;
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const get = (host: string, path: string, headers: Record<string, string> = {}, method = 'GET') =>
    new Promise<Answer>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, method, headers: { host, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: Buffer.concat(chunks),
            atOnce: atOnce.at(-1)!,
          }),
        );
      })
        .on('error', reject)
        .end();
    });
  return { get, compressed };
}

const target = (deploymentId: string, artifactId: string): Target => ({
  projectId: 'prj_1',
  deploymentId,
  artifactId,
  kind: 'static',
  spa: false,
  environment: 'production',
});

/** The headers that describe the file rather than the request. */
const fileHeaders = ({ date: _date, ...rest }: IncomingHttpHeaders) => rest;

describe('edge: prepared header fields of warm files', () => {
  it('names the deployment that asked, when two deployments serve one artifact (a rollback)', async () => {
    const root = tempDir();
    const site = tempDir({ 'index.html': '<h1>one artifact</h1>' });
    const { artifactId } = await createArtifactStore(root).storeDirectory(site, limits);
    const { get } = await edgeFor(root, {
      'a.test': target('dpl_original', artifactId),
      'b.test': target('dpl_rollback', artifactId),
    });

    const seen: string[] = [];
    const answers: Answer[] = [];
    // By its page's path and by its file's own path, which skips matching once prepared.
    const asked: [string, string][] = [
      ['a.test', '/'],
      ['a.test', '/index.html'],
      ['b.test', '/'],
      ['a.test', '/index.html'],
      ['b.test', '/index.html'],
      ['b.test', '/'],
    ];
    for (const [host, path] of asked) {
      const res = await get(host, path);
      seen.push(String(res.headers['x-slipway-deployment']));
      answers.push(res);
    }
    expect(seen).toEqual([
      'dpl_original',
      'dpl_original',
      'dpl_rollback',
      'dpl_original',
      'dpl_rollback',
      'dpl_rollback',
    ]);
    // Everything after the first request came from the prepared fields, in the same turn.
    expect(answers.map((a) => a.atOnce)).toEqual([false, true, true, true, true, true]);
    const { 'x-slipway-deployment': _a, ...fromA } = fileHeaders(answers[1]!.headers);
    const { 'x-slipway-deployment': _b, ...fromB } = fileHeaders(answers[2]!.headers);
    expect(fromB).toEqual(fromA);
  });

  it('never lets a path answered before reach a private file (.env, .git), asked twice in any spelling', async () => {
    const root = tempDir();
    const site = tempDir({
      'index.html': '<h1>public</h1>',
      'about.html': '<h1>about</h1>',
      '.env': 'SECRET=hunter2',
      '.env.html': 'SECRET=hunter2',
      'docs/.git/config': 'url = https://x-access-token:SECRET@github.com/o/r.git',
    });
    const { artifactId } = await createArtifactStore(root).storeDirectory(site, limits);
    const { get } = await edgeFor(root, { 'a.test': target('dpl_a', artifactId) });
    // The ordinary path works, and fills the table of paths answered before.
    for (const path of ['/', '/index.html', '/about', '/about.html']) {
      const res = await get('a.test', path);
      expect(res.status, path).toBe(200);
    }
    const attempts = [
      '/.env',
      '/.ENV',
      '/%2Eenv',
      '/.env.html',
      '/.env.',
      '/docs/.git/config',
      '/docs/%2egit/config',
    ];
    for (const path of [...attempts, ...attempts]) {
      const res = await get('a.test', path);
      expect(res.status, path).toBe(404);
      expect(res.body.toString(), path).not.toContain('SECRET');
    }
    expect((await get('a.test', '/about.html')).body.toString()).toBe('<h1>about</h1>');
  });

  it('never answers one artifact with the fields of another artifact’s file at the same path', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    const old = await store.storeDirectory(tempDir({ 'app.txt': 'old bytes' }), limits);
    const next = await store.storeDirectory(tempDir({ 'app.txt': 'the new, longer bytes' }), limits);
    const { get } = await edgeFor(root, {
      'old.test': target('dpl_old', old.artifactId),
      'new.test': target('dpl_new', next.artifactId),
    });

    for (let round = 0; round < 3; round++) {
      const a = await get('old.test', '/app.txt');
      const b = await get('new.test', '/app.txt');
      expect([a.body.toString(), b.body.toString()]).toEqual(['old bytes', 'the new, longer bytes']);
      expect([a.headers.etag, b.headers.etag]).toEqual([
        `"${sha('old bytes')}"`,
        `"${sha('the new, longer bytes')}"`,
      ]);
      expect([a.headers['content-length'], b.headers['content-length']]).toEqual(['9', '21']);
      expect([a.headers['x-slipway-deployment'], b.headers['x-slipway-deployment']]).toEqual([
        'dpl_old',
        'dpl_new',
      ]);
      if (round > 0) expect([a.atOnce, b.atOnce]).toEqual([true, true]);
    }
  });

  it('keeps each encoding’s fields to itself, and a file served as 404 apart from the same file as 200', async () => {
    const text = 'compress me, please. '.repeat(200);
    const notFound = `<h1>not here</h1>${'<!-- padding -->'.repeat(100)}`;
    const root = tempDir();
    const site = tempDir({ 'big.txt': text, '404.html': notFound });
    const { artifactId } = await createArtifactStore(root).storeDirectory(site, limits);
    const { get, compressed } = await edgeFor(root, { 'a.test': target('dpl_1', artifactId) });

    await get('a.test', '/big.txt', { 'accept-encoding': 'gzip, br' });
    // Queued by that request (it got the file as it is): wait for the copies, then read each once.
    await compressed.get(sha(text), '', 0, 'gzip');
    await compressed.get(sha(text), '', 0, 'br');
    await get('a.test', '/big.txt', { 'accept-encoding': 'gzip' });
    await get('a.test', '/big.txt', { 'accept-encoding': 'br' });

    const plain = await get('a.test', '/big.txt');
    const gz = await get('a.test', '/big.txt', { 'accept-encoding': 'gzip' });
    const br = await get('a.test', '/big.txt', { 'accept-encoding': 'gzip, br' });
    const plainAgain = await get('a.test', '/big.txt', { 'accept-encoding': 'identity' });
    const gzAgain = await get('a.test', '/big.txt', { 'accept-encoding': 'br;q=0, gzip' });
    const brHead = await get('a.test', '/big.txt', { 'accept-encoding': 'br' }, 'HEAD');
    expect([plain, gz, br, plainAgain, gzAgain, brHead].map((a) => a.atOnce)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);

    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.etag).toBe(`"${sha(text)}"`);
    expect(plain.headers['content-length']).toBe(String(text.length));
    expect(plain.body.toString()).toBe(text);

    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.etag).toBe(`W/"${sha(text)}"`);
    expect(gz.headers['content-length']).toBe(String(gz.body.length));
    expect(gunzipSync(gz.body).toString()).toBe(text);

    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-length']).toBe(String(br.body.length));
    expect(brotliDecompressSync(br.body).toString()).toBe(text);
    // The two copies differ in length, so neither could pass with the other's Content-Length.
    expect(br.body.length).not.toBe(gz.body.length);

    expect(fileHeaders(plainAgain.headers)).toEqual(fileHeaders(plain.headers));
    expect(fileHeaders(gzAgain.headers)).toEqual(fileHeaders(gz.headers));
    expect(fileHeaders(brHead.headers)).toEqual(fileHeaders(br.headers));
    expect(brHead.body.length).toBe(0);

    // /404.html asked for by name is a 200 with ranges; as every missing path's answer, a 404 without.
    const byName = await get('a.test', '/404.html');
    const missing = await get('a.test', '/no/such/page');
    const byNameAgain = await get('a.test', '/404.html');
    const missingAgain = await get('a.test', '/elsewhere');
    expect([byName.status, missing.status, byNameAgain.status, missingAgain.status]).toEqual([
      200, 404, 200, 404,
    ]);
    expect([byNameAgain.atOnce, missingAgain.atOnce]).toEqual([true, true]);
    expect(byNameAgain.headers['accept-ranges']).toBe('bytes');
    expect(missingAgain.headers['accept-ranges']).toBeUndefined();
    expect(missingAgain.body.toString()).toBe(notFound);
    expect(fileHeaders(byNameAgain.headers)).toEqual(fileHeaders(byName.headers));
    expect(fileHeaders(missingAgain.headers)).toEqual(fileHeaders(missing.headers));
  });

  it('still reads each request’s own headers once its file is prepared: validators, ranges, the date', async () => {
    const root = tempDir();
    const site = tempDir({ 'letters.txt': 'abcdefghijklmnopqrstuvwxyz'.repeat(40) });
    const { artifactId } = await createArtifactStore(root).storeDirectory(site, limits);
    const { get } = await edgeFor(root, { 'a.test': target('dpl_1', artifactId) });

    const first = await get('a.test', '/letters.txt');
    const warm = await get('a.test', '/letters.txt');
    expect(warm.atOnce).toBe(true);
    expect(warm.headers.date).toMatch(/GMT$/);

    const notModified = await get('a.test', '/letters.txt', { 'if-none-match': first.headers.etag! });
    expect(notModified.status).toBe(304);
    expect(notModified.headers['content-length']).toBeUndefined();
    expect(notModified.headers['x-slipway-deployment']).toBe('dpl_1');
    const stale = await get('a.test', '/letters.txt', { 'if-none-match': '"stale"' });
    expect(stale.status).toBe(200);
    expect(stale.body.length).toBe(1040);

    const part = await get('a.test', '/letters.txt', { range: 'bytes=2-4' });
    expect(part.status).toBe(206);
    expect(part.body.toString()).toBe('cde');
    expect(part.headers['content-range']).toBe('bytes 2-4/1040');
    expect(part.headers['content-length']).toBe('3');
    const whole = await get('a.test', '/letters.txt');
    expect(whole.status).toBe(200);
    expect(whole.headers['content-range']).toBeUndefined();
    expect(whole.headers['content-length']).toBe('1040');
    expect(fileHeaders(whole.headers)).toEqual(fileHeaders(warm.headers));
  });
});
