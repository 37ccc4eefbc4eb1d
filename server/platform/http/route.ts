import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { z } from 'zod';
import type { Actor, Deps } from '../deps/deps.ts';
import { nextLink } from './pagination.ts';
import { successSchema } from './envelope.ts';
import { idempotencyHooks } from './idempotency.ts';
import { announceDeprecation, authenticateRequest, chargeRateLimit, SYSTEM_ACTOR } from './pipeline.ts';
import { zodSerializerCompiler, zodValidatorCompiler } from './schema-compilers.ts';
import type { RouteSpec } from './route-spec.ts';
import { presentHeaders, sendEventStream } from './sse.ts';

/**
 * Registers the route tables. Each route is a Fastify route with hooks (server/platform/http/pipeline.ts)
 * and schemas: the zod schemas of `params`, `query` and `body` check the input, and the answer is
 * serialised by the schema of its envelope (server/platform/http/envelope.ts).
 */
export function registerRoutes(app: FastifyInstance, deps: Deps, specs: RouteSpec[]): void {
  app.decorateRequest('actor', null as unknown as Actor);
  app.decorateRequest('hourlyLimit', 0);
  app.decorateRequest('hourlyPlan', 'free');
  app.decorateRequest('idempotencyClaim', null);
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(zodSerializerCompiler);
  for (const spec of specs.filter((s) => !s.anyBody)) app.route(routeOptions(deps, spec));
  const anyBody = specs.filter((s) => s.anyBody);
  if (anyBody.length > 0) {
    // Content-type parsers belong to a scope, not a route: these routes get one of their own.
    void app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ANY_BODY_LIMIT }, (_req, _body, done) =>
        done(null, undefined),
      );
      for (const spec of anyBody) scope.route(routeOptions(deps, spec));
    });
  }
}

/** The most a route that ignores its body reads of it. */
const ANY_BODY_LIMIT = 64 * 1024;

function routeOptions(deps: Deps, spec: RouteSpec): RouteOptions {
  const authenticated = spec.auth !== false;
  // Every authenticated POST may carry an Idempotency-Key.
  const idempotent = spec.method === 'POST' && authenticated ? idempotencyHooks(deps) : undefined;
  const answer = successSchema(spec);
  const status = spec.successStatus ?? 200;
  return {
    method: spec.method,
    url: spec.url,
    ...(spec.bodyLimit ? { bodyLimit: spec.bodyLimit } : {}),
    ...(spec.bodyTooLarge ? { config: { bodyTooLarge: spec.bodyTooLarge } } : {}),
    schema: {
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.query ? { querystring: spec.query } : {}),
      ...(spec.body
        ? { body: spec.body }
        : spec.rawBody || spec.anyBody || spec.method === 'GET'
          ? {}
          : { body: NO_BODY }),
      // An upload answers 200 or 201 with the same envelope, and so does a deploy hook.
      ...(answer
        ? {
            response: {
              [status]: answer,
              ...(status === 200 || status === 201 ? { 200: answer, 201: answer } : {}),
            },
          }
        : {}),
    },
    onRequest: [
      ...(spec.deprecated ? [announceDeprecation(spec.deprecated)] : []),
      ...(authenticated ? [authenticateRequest(deps, spec)] : []),
    ],
    preHandler: [
      ...(authenticated ? [chargeRateLimit(deps, spec)] : []),
      ...(idempotent ? [idempotent.preHandler] : []),
    ],
    ...(idempotent ? { onSend: idempotent.onSend, onResponse: idempotent.onResponse } : {}),
    handler: async (req, reply) => {
      const { body, query, params } = req as FastifyRequest<{
        Body: unknown;
        Querystring: unknown;
        Params: unknown;
      }>;
      const actor = authenticated ? req.actor : SYSTEM_ACTOR;
      const result = await spec.handler({ body, query, params, actor, deps, req, reply });
      if ((result.kind === 'list' || result.kind === 'data') && result.meta?.next) {
        void reply.header('Link', nextLink(deps.urls.api, req.url, result.meta.next));
      }
      switch (result.kind) {
        case 'sent':
          return reply;
        case 'events':
          // From here on the stream writes the raw response; headers set so far go along with it.
          reply.hijack();
          await sendEventStream(reply.raw, result.events, {
            headers: presentHeaders(reply.getHeaders()),
            log: deps.log,
          });
          return reply;
        case 'deleted':
          return reply.status(200).send({ success: true, message: result.message });
        case 'list':
          return reply.status(200).send({ success: true, data: result.data, meta: result.meta });
        case 'data':
          if (spec.responseKind === 'bare') return reply.status(result.status ?? status).send(result.data);
          return reply.status(result.status ?? status).send({
            success: true,
            data: result.data,
            ...(result.meta ? { meta: result.meta } : {}),
          });
      }
    },
  };
}

/** The body of an operation that takes none: nothing, or `{}` as some clients send; it reads as none. */
const NO_BODY = z
  .unknown()
  .refine(
    (body) => body === null || (typeof body === 'object' && Object.keys(body).length === 0),
    'this operation takes no request body',
  )
  .transform(() => undefined);
