import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sendError } from '../../server/platform/http/errors.ts';
import { registerRoutes } from '../../server/platform/http/route.ts';
import { route } from '../../server/platform/http/route-spec.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';

/** The API's request pipeline as Fastify hooks and schema compilers (server/platform/http/pipeline.ts). */
describe('the route pipeline', () => {
  let t: TestApp;
  let alice: TestUser;
  let app: FastifyInstance;
  const seen: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user();
    app = Fastify();
    app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
    // A plugin hooks in like any Fastify plugin: it runs after the caller is known.
    app.addHook('preHandler', async (req) => {
      seen.push(`${req.routeOptions.url} ${req.actor?.email ?? 'nobody'}`);
    });
    registerRoutes(app, t.deps, [
      route({
        method: 'GET',
        url: '/v1/test/widget',
        tag: 'test',
        summary: 'answers more than its schema documents',
        response: z.object({ id: z.string(), size: z.number().int(), note: z.string().nullable() }),
        handler: async () => ({
          kind: 'data',
          data: { id: 'wdg_1', size: 3, note: null, internalSecret: 'must not leave' },
        }),
      }),
      route({
        method: 'GET',
        url: '/v1/test/widgets',
        tag: 'test',
        summary: 'a list',
        query: z.strictObject({ limit: z.coerce.number().int().max(5).default(2) }),
        response: z.object({ id: z.string() }),
        responseKind: 'list',
        handler: async ({ query }) => ({
          kind: 'list',
          data: Array.from({ length: query.limit }, (_, i) => ({ id: `wdg_${i}`, extra: i })),
          meta: { limit: query.limit, next: null },
        }),
      }),
      route({
        method: 'POST',
        url: '/v1/test/bare',
        tag: 'test',
        summary: 'answered without the envelope',
        body: z.strictObject({ name: z.string().transform((s) => s.toLowerCase()) }),
        response: z.object({ name: z.string() }),
        responseKind: 'bare',
        successStatus: 201,
        handler: async ({ body }) => ({ kind: 'data', data: body, status: 201 }),
      }),
    ]);
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  const get = (url: string) => app.inject({ url, headers: { authorization: `Bearer ${alice.token}` } });

  it('writes an answer by its schema: documented fields only', async () => {
    const res = await get('/v1/test/widget');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: { id: 'wdg_1', size: 3, note: null } });
    expect(res.body).not.toContain('internalSecret');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('writes each item of a list by the item schema, with its meta', async () => {
    const res = await get('/v1/test/widgets?limit=3');
    expect(res.json()).toEqual({
      success: true,
      data: [{ id: 'wdg_0' }, { id: 'wdg_1' }, { id: 'wdg_2' }],
      meta: { limit: 3, next: null },
    });
  });

  it('hands the handler parsed input, and answers a bare route without the envelope', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/test/bare',
      headers: { authorization: `Bearer ${alice.token}` },
      payload: { name: 'MiXeD' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ name: 'mixed' });
  });

  it('refuses bad input naming the field, before the handler, a plugin or the rate limit sees it', async () => {
    seen.length = 0;
    const res = await get('/v1/test/widgets?limit=50');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'limit', message: expect.stringMatching(/5/) }],
    });
    expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
    expect(seen).toEqual([]);
    const ok = await get('/v1/test/widgets');
    expect(ok.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(seen).toEqual([`/v1/test/widgets ${alice.email}`]);
  });

  it('asks for a token before reading the body', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/test/bare',
      payload: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('UNAUTHORIZED');
  });

  it('documents each answer as it is written (one schema)', async () => {
    type Schema = { properties: Record<string, unknown> };
    type Operation = { responses: Record<string, { content: Record<string, { schema: Schema }> }> };
    const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, Operation>>;
    }>();
    const listed = doc.paths['/v1/projects']!.get!.responses['200']!.content['application/json']!.schema;
    expect(Object.keys(listed.properties)).toEqual(['success', 'data', 'meta']);
    const deleted =
      doc.paths['/v1/projects/{projectId}']!.delete!.responses['200']!.content['application/json']!.schema;
    expect(Object.keys(deleted.properties)).toEqual(['success', 'message']);
  });
});
