import { buildOpenApi, renderDocs } from '../http/openapi.ts';
import { route, type RouteSpec } from '../http/route.ts';

/** Health, readiness and the API description; none of them needs a token. */
export function systemRoutes(getSpecs: () => RouteSpec[]): RouteSpec[] {
  let doc: Record<string, unknown> | undefined;
  const openapi = () => (doc ??= buildOpenApi(getSpecs()));
  return [
    route({
      method: 'GET',
      url: '/healthz',
      tag: 'system',
      summary: 'The process is alive',
      auth: false,
      handler: async ({ reply }) => {
        await reply.send({ status: 'ok' });
        return { kind: 'sent' };
      },
    }),
    route({
      method: 'GET',
      url: '/readyz',
      tag: 'system',
      summary: 'The database is reachable',
      auth: false,
      handler: async ({ deps, reply }) => {
        const ok = await deps.store.ping();
        await reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'database unreachable' });
        return { kind: 'sent' };
      },
    }),
    route({
      method: 'GET',
      url: '/v1/openapi.json',
      tag: 'system',
      summary: 'OpenAPI 3.1 description of this API',
      auth: false,
      handler: async ({ reply }) => {
        await reply.send(openapi());
        return { kind: 'sent' };
      },
    }),
    route({
      method: 'GET',
      url: '/docs',
      tag: 'system',
      summary: 'Human-readable API reference',
      auth: false,
      handler: async ({ reply }) => {
        await reply.type('text/html; charset=utf-8').send(renderDocs(openapi()));
        return { kind: 'sent' };
      },
    }),
  ];
}
