import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelope } from '../../api/schemas/common.ts';
import { errorExample, operationExamples } from '../../server/platform/http/openapi-examples.ts';
import { allRoutes } from '../../server/routes/index.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** `METHOD /path` of every route Fastify registered, read from its route tree (HEAD is implied by GET). */
function registeredRoutes(tree: string): string[] {
  const out: string[] = [];
  const stack: { depth: number; path: string }[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length;
    while (stack.length && stack[stack.length - 1]!.depth >= depth) stack.pop();
    const path = (stack[stack.length - 1]?.path ?? '') + m[2]!;
    stack.push({ depth, path });
    for (const method of (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD')) {
      out.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
    }
  }
  return out.sort();
}

interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  parameters: { name: string; in: string; required?: boolean; schema: unknown }[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  security?: unknown[];
}
type Doc = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
  security: Record<string, unknown>[];
};

/** Every `$ref` in the document must point inside it. */
function collectRefs(value: unknown, refs: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => collectRefs(v, refs));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') refs.push(v);
      else collectRefs(v, refs);
    }
  }
  return refs;
}

describe('cross-cutting HTTP behaviour', () => {
  let t: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
  });
  afterAll(() => t.close());

  it('generates an X-Request-Id, or echoes a well-formed one the client sent', async () => {
    const a = await t.call(alice, 'GET', '/v1/user');
    const b = await t.call(alice, 'GET', '/v1/user');
    expect(a.headers['x-request-id']).toMatch(UUID);
    expect(b.headers['x-request-id']).toMatch(UUID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    const echoed = await t.call(alice, 'GET', '/v1/user', undefined, { 'x-request-id': 'ci-run-42.step:7' });
    expect(echoed.headers['x-request-id']).toBe('ci-run-42.step:7');
    // Ids that could forge log lines or headers are replaced.
    const weird = await t.call(alice, 'GET', '/v1/user', undefined, { 'x-request-id': 'a b<script>' });
    expect(weird.headers['x-request-id']).toMatch(UUID);
    const long = await t.call(alice, 'GET', '/v1/user', undefined, { 'x-request-id': 'x'.repeat(200) });
    expect(long.headers['x-request-id']).toMatch(UUID);
    const onError = await t.call(null, 'GET', '/v1/user', undefined, { 'x-request-id': 'err-1' });
    expect(onError.status).toBe(401);
    expect(onError.headers['x-request-id']).toBe('err-1');
  });

  it('sends X-API-Version 1.2.0 on every response', async () => {
    for (const [user, url] of [
      [alice, '/v1/user'],
      [null, '/v1/user'],
      [null, '/healthz'],
      [null, '/nowhere'],
      [null, '/v1/openapi.json'],
    ] as const) {
      const res = await t.call(user, 'GET', url);
      expect(res.headers['x-api-version'], url).toBe('1.2.0');
    }
  });

  it('answers unknown routes and methods with the NOT_FOUND envelope', async () => {
    const res = await t.call(null, 'GET', '/v1/nothing-here?x=1');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'NOT_FOUND', message: 'No route for GET /v1/nothing-here' },
    });
    const method = await t.call(alice, 'PUT', '/v1/organizations', {});
    expect(method.status).toBe(404);
    expect(method.body.error.code).toBe('NOT_FOUND');
    expect((await t.call(alice, 'GET', '/v2/projects')).body.error.code).toBe('NOT_FOUND');
  });

  it('accepts a trailing slash and refuses a body where none is expected', async () => {
    expect((await t.call(alice, 'GET', '/v1/user/')).status).toBe(200);
    const res = await t.call(alice, 'DELETE', '/v1/user/tokens/tok_aaaaaaaaaaaaaaaaaaaa', { force: true });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('answers /healthz and /readyz without a token', async () => {
    const health = await t.call(null, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await t.call(null, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
  });

  it('reports not ready when the database is gone', async () => {
    const other = await createTestApp();
    try {
      await other.deps.store.close();
      const ready = await other.call(null, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'database unreachable' });
      expect((await other.call(null, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await other.app.close();
    }
  });

  describe('GET /v1/openapi.json', () => {
    let doc: Doc;
    beforeAll(async () => {
      const res = await t.call(null, 'GET', '/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      doc = res.body;
    });

    it('is an OpenAPI 3.1 document', () => {
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.info).toMatchObject({ title: 'Slipway API', version: '1.2.0' });
      for (const requirement of doc.security) {
        for (const name of Object.keys(requirement))
          expect(doc.components.securitySchemes).toHaveProperty(name);
      }
      const operationIds = new Set<string>();
      for (const [path, item] of Object.entries(doc.paths)) {
        expect(path.startsWith('/'), path).toBe(true);
        const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
        for (const [method, op] of Object.entries(item)) {
          const where = `${method} ${path}`;
          expect(METHODS, where).toContain(method);
          expect(op.summary, where).toBeTruthy();
          expect(op.tags.length, where).toBe(1);
          expect(operationIds.has(op.operationId), `duplicate operationId ${op.operationId}`).toBe(false);
          operationIds.add(op.operationId);
          const pathParams = op.parameters.filter((p) => p.in === 'path');
          expect(pathParams.map((p) => p.name).sort(), where).toEqual(templated);
          expect(
            pathParams.every((p) => p.required === true),
            where,
          ).toBe(true);
          const keys = op.parameters.map((p) => `${p.in}:${p.name}`);
          expect(new Set(keys).size, where).toBe(keys.length);
          for (const p of op.parameters) {
            expect(['path', 'query', 'header', 'cookie'], where).toContain(p.in);
            expect(typeof p.schema, where).toBe('object');
          }
          const statuses = Object.keys(op.responses);
          expect(statuses.length, where).toBeGreaterThan(0);
          for (const [status, response] of Object.entries(op.responses)) {
            expect(status === 'default' || /^[1-5](\d\d|XX)$/.test(status), where).toBe(true);
            expect(typeof response.description, where).toBe('string');
          }
          if (op.requestBody) {
            // JSON, or a file's raw bytes (uploads).
            const [type, media] = Object.entries(op.requestBody.content)[0] as [string, { schema: unknown }];
            expect(['application/json', 'application/octet-stream'], where).toContain(type);
            expect(media.schema, where).toBeTypeOf('object');
          }
        }
      }
      for (const ref of collectRefs(doc)) {
        expect(ref.startsWith('#/'), ref).toBe(true);
        let node: unknown = doc;
        for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown>)?.[part];
        expect(node, ref).toBeDefined();
      }
    });

    it('lists every /v1 route the server registered, and nothing else', () => {
      const described = Object.entries(doc.paths)
        .filter(([path]) => path.startsWith('/v1/'))
        .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
        .sort();
      const registered = registeredRoutes(t.app.printRoutes({ commonPrefix: false })).filter(
        // The description does not describe itself.
        (r) => r.includes(' /v1/') && r !== 'GET /v1/openapi.json',
      );
      expect(registered).toContain('POST /v1/organizations/{orgId}/members/invite');
      expect(registered).toContain('DELETE /v1/user/tokens/{tokenId}');
      expect(described).toEqual(registered);
    });

    it('describes bodies, queries and answers from the zod schemas', () => {
      const create = doc.paths['/v1/organizations']!.post!;
      expect(create.responses['201']).toBeDefined();
      const body = create.requestBody!.content['application/json']!.schema;
      expect(body).toMatchObject({ type: 'object', required: ['name'], additionalProperties: false });
      expect(Object.keys(body.properties as object).sort()).toEqual(['displayName', 'name', 'plan']);
      const list = doc.paths['/v1/organizations']!.get!;
      expect(list.parameters.map((p) => p.name).sort()).toEqual(['cursor', 'limit', 'page']);
      expect(list.parameters.find((p) => p.name === 'limit')!.schema).toMatchObject({
        maximum: 100,
        minimum: 1,
      });
      const listed = list.responses['200']!.content!['application/json']!.schema as any;
      expect(listed.properties.meta.required.sort()).toEqual(['limit']);
      expect(listed.properties.data.items.properties).toHaveProperty('memberCount');
      const del = doc.paths['/v1/organizations/{orgId}/members/{email}']!.delete!;
      expect(del.responses['200']!.content!['application/json']!.schema).toMatchObject({
        properties: { success: { const: true }, message: { type: 'string' } },
      });
      expect(doc.paths['/healthz']).toBeUndefined();
    });
  });

  it('serves /docs: Redoc fed by /v1/openapi.json, its script from the service itself, compressed and cached', async () => {
    const res = await t.call(null, 'GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toMatch(/^<!doctype html>/i);
    // Relative links: the page works under a path prefix behind a proxy.
    expect(res.text).toContain('<redoc spec-url="v1/openapi.json"');
    expect(res.text).toContain('<script src="docs/redoc.standalone.js"></script>');
    expect(res.text).toContain('<a href="v1/openapi.json">');

    const script = await t.app.inject({
      method: 'GET',
      url: '/docs/redoc.standalone.js',
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['content-encoding']).toBe('gzip');
    const vendored = readFileSync(join(import.meta.dirname, '../../dist/docs/redoc.standalone.js'));
    expect(gunzipSync(script.rawPayload).equals(vendored)).toBe(true);
    expect(script.rawPayload.length).toBeLessThan(vendored.length / 3);
    const again = await t.app.inject({
      method: 'GET',
      url: '/docs/redoc.standalone.js',
      headers: { 'if-none-match': String(script.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    const plain = await t.app.inject({ method: 'GET', url: '/docs/redoc.standalone.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(vendored)).toBe(true);
  });

  it('the committed Redoc bundle is the pinned devDependency’s (npm run vendor:docs)', () => {
    const root = join(import.meta.dirname, '../..');
    const pinned = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies.redoc;
    const installed = (
      JSON.parse(readFileSync(join(root, 'node_modules/redoc/package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    expect(installed).toBe(pinned);
    for (const file of ['redoc.standalone.js', 'redoc.standalone.js.LICENSE.txt']) {
      const committed = readFileSync(join(root, 'dist/docs', file));
      expect(committed.equals(readFileSync(join(root, 'node_modules/redoc/bundles', file))), file).toBe(true);
    }
  });

  it('every example in the reference is valid for its route, request and answer', () => {
    const specs = new Map(allRoutes().map((r) => [`${r.method} ${r.url}`, r]));
    expect(Object.keys(operationExamples).length).toBeGreaterThanOrEqual(8);
    for (const [key, ex] of Object.entries(operationExamples)) {
      const spec = specs.get(key);
      expect(spec, key).toBeDefined();
      if (ex.request !== undefined) {
        const parsed = spec!.body!.safeParse(ex.request);
        expect(parsed.success, `${key} request: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      }
      if (ex.response !== undefined) {
        const parsed = spec!.response!.safeParse(ex.response);
        expect(parsed.success, `${key} response: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      }
    }
    expect(ErrorEnvelope.safeParse(errorExample).success).toBe(true);
  });

  it('the OpenAPI document carries the examples and the sections’ descriptions', async () => {
    const doc = (await t.call(null, 'GET', '/v1/openapi.json')).body;
    const create = doc.paths['/v1/projects'].post;
    expect(create.requestBody.content['application/json'].example).toEqual(
      operationExamples['POST /v1/projects']!.request,
    );
    expect(create.responses['201'].content['application/json'].example).toEqual({
      success: true,
      data: operationExamples['POST /v1/projects']!.response,
    });
    const list = doc.paths['/v1/projects/{projectId}/deployments'].get;
    expect(list.responses['200'].content['application/json'].example).toMatchObject({
      success: true,
      data: [{ id: expect.stringMatching(/^dpl_/) }],
      meta: { page: 1, limit: 10, total: 1, next: null },
    });
    expect(create.responses.default.content['application/json'].example).toEqual(errorExample);
    expect(doc.tags.map((tg: { name: string }) => tg.name).slice(0, 2)).toEqual(['projects', 'deployments']);
  });

  it('behaves the same over a real socket', async () => {
    const server = await createTestApp();
    try {
      const address = await server.app.listen({ host: '127.0.0.1', port: 0 });
      const res = await fetch(`${address}/v1/unknown`, { headers: { 'x-request-id': 'sock-1' } });
      expect(res.status).toBe(404);
      expect(res.headers.get('x-request-id')).toBe('sock-1');
      expect(res.headers.get('x-api-version')).toBe('1.2.0');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
      const user = await server.user();
      const me = await fetch(`${address}/v1/user`, { headers: { authorization: `Bearer ${user.token}` } });
      expect(me.status).toBe(200);
      expect(me.headers.get('x-ratelimit-limit')).toBe('100');
    } finally {
      await server.close();
    }
  });
});
