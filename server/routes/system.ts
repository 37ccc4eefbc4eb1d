import { system } from '../../api/routes/system.ts';
import { docsPage, docsScript } from '../platform/http/docs-page.ts';
import { API_VERSION, buildOpenApi } from '../platform/http/openapi.ts';
import { route, type RouteSpec } from '../platform/http/route-spec.ts';

/** Health, readiness and the API description; none of them needs a token. */
export function systemRoutes(getSpecs: () => RouteSpec[]): RouteSpec[] {
  let doc: Record<string, unknown> | undefined;
  const openapi = () => (doc ??= buildOpenApi(getSpecs()));
  return [
    route({
      ...system.healthz,
      handler: async ({ reply }) => {
        await reply.send({ status: 'ok' });
        return { kind: 'sent' };
      },
    }),
    route({
      ...system.readyz,
      handler: async ({ deps, reply }) => {
        const ok = await deps.store.ping();
        await reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'database unreachable' });
        return { kind: 'sent' };
      },
    }),
    route({
      ...system.openapi,
      handler: async ({ reply }) => {
        await reply.send(openapi());
        return { kind: 'sent' };
      },
    }),
    route({
      ...system.docs,
      handler: async ({ reply }) => {
        await reply.type('text/html; charset=utf-8').send(docsPage(API_VERSION));
        return { kind: 'sent' };
      },
    }),
    route({
      ...system.docsScript,
      handler: async ({ req: request, reply }) => {
        const asset = docsScript();
        reply
          .type('text/javascript; charset=utf-8')
          .header('cache-control', 'public, max-age=86400')
          .header('etag', asset.etag)
          .header('vary', 'accept-encoding');
        if (request.headers['if-none-match'] === asset.etag) {
          await reply.status(304).send();
        } else if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
          await reply.header('content-encoding', 'gzip').send(asset.gzip);
        } else {
          await reply.send(asset.body);
        }
        return { kind: 'sent' };
      },
    }),
  ];
}
