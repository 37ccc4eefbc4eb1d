import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../../api/errors.ts';
import type { PageMeta } from '../../api/schemas/common.ts';
import type { Actor, Deps } from '../services/deps.ts';
import { authenticate } from './auth.ts';
import { checkScope, type ScopedAccess } from './scope.ts';
import { beginIdempotentRequest, idempotencyHooks } from './idempotency.ts';
import { consumeRateLimit } from './rate-limit.ts';
import { presentHeaders, sendEventStream, type SseFrame } from './sse.ts';
import { parseOrThrow } from './validation.ts';
import { nextLink } from '../services/pagination.ts';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

export interface Deprecation {
  /** When it was deprecated. */
  since: Date;
  /** When it stops working. */
  sunset: Date;
  /** Path of the operation that replaces it. */
  successor: string;
}

export interface HandlerContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  actor: Actor;
  deps: Deps;
  req: FastifyRequest;
  reply: FastifyReply;
}

/** What a handler returns; the route's `kind` decides how it is sent. */
export type HandlerResult =
  | { kind: 'data'; data: unknown; status?: number; meta?: PageMeta }
  | { kind: 'list'; data: unknown[]; meta: PageMeta }
  | { kind: 'deleted'; message: string }
  /** A `text/event-stream`: the route writes the frames; `signal` aborts when the client goes away. */
  | { kind: 'events'; events: (signal: AbortSignal) => AsyncIterable<SseFrame[]> }
  /** The handler already sent the reply (plain text, raw bytes). */
  | { kind: 'sent' };

export interface RouteSpec<
  B extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  P extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** Fastify path, e.g. `/v1/projects/:projectId`. */
  url: string;
  summary: string;
  tag: string;
  /** Default true: the route needs a bearer token and counts against the rate limit. */
  auth?: boolean;
  body?: B;
  query?: Q;
  params?: P;
  /** Schema of `data` (or of one list item), for the OpenAPI description. */
  response?: z.ZodType;
  responseKind?: 'data' | 'list' | 'deleted' | 'text';
  successStatus?: number;
  deprecated?: Deprecation;
  /**
   * The handler reads the request's bytes itself, as a stream (`req.body`, sent with
   * `Content-Type: application/octet-stream`); no JSON body is parsed or refused.
   */
  rawBody?: boolean;
  /** Largest JSON body in bytes, when a route needs more than the server's 1 MiB. */
  bodyLimit?: number;
  /** Open to tokens from GitHub Actions trust policies, within their project (server/http/scope.ts). */
  scoped?: ScopedAccess;
  handler: (ctx: HandlerContext<z.infer<B>, z.infer<Q>, z.infer<P>>) => Promise<HandlerResult>;
}

/** Keeps the generic types of a spec while storing it in a plain list. */
export const route = <B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  spec: RouteSpec<B, Q, P>,
): RouteSpec => spec;

const SYSTEM_ACTOR: Actor = { userId: '', email: '', tokenId: '' };

/** Registers routes: authenticate, rate-limit, parse and check input, honour Idempotency-Key (POST), run, wrap in the envelope. */
export function registerRoutes(app: FastifyInstance, deps: Deps, specs: RouteSpec[]): void {
  for (const spec of specs) {
    // Every POST may carry an Idempotency-Key: these hooks store its answer once it is known.
    const hooks = spec.method === 'POST' && spec.auth !== false ? idempotencyHooks(deps) : {};
    app.route({
      method: spec.method,
      url: spec.url,
      ...(spec.bodyLimit ? { bodyLimit: spec.bodyLimit } : {}),
      ...hooks,
      handler: async (req, reply) => {
        let actor = SYSTEM_ACTOR;
        if (spec.auth !== false) {
          const auth = await authenticate(deps, req.headers.authorization);
          actor = auth.actor;
          if (actor.scope) await checkScope(deps, actor.scope, spec, req.params);
          const rl = await consumeRateLimit(deps, actor.userId, auth.hourlyLimit);
          void reply.header('X-RateLimit-Limit', rl.limit);
          void reply.header('X-RateLimit-Remaining', rl.remaining);
          void reply.header('X-RateLimit-Reset', rl.reset);
          if (!rl.allowed) {
            const wait = Math.max(1, rl.reset - Math.floor(deps.clock.now().getTime() / 1000));
            void reply.header('Retry-After', wait);
            throw new ApiError(
              'RATE_LIMIT_EXCEEDED',
              `Rate limit of ${rl.limit} requests per hour exceeded; retry in ${wait} seconds`,
            );
          }
        }
        if (spec.deprecated) {
          void reply.header('Deprecation', `@${Math.floor(spec.deprecated.since.getTime() / 1000)}`);
          void reply.header('Sunset', spec.deprecated.sunset.toUTCString());
          void reply.header('Link', `<${spec.deprecated.successor}>; rel="deprecation"`);
        }
        const params = spec.params ? parseOrThrow(spec.params, req.params, 'params') : req.params;
        const query = spec.query ? parseOrThrow(spec.query, req.query ?? {}, 'query') : undefined;
        let body: unknown = undefined;
        if (spec.body) body = parseOrThrow(spec.body, req.body, 'body');
        else if (spec.rawBody) body = req.body;
        else if (req.body !== undefined && req.body !== null && spec.method !== 'GET') {
          // A body where none is expected is a mistake worth telling about.
          if (typeof req.body !== 'object' || Object.keys(req.body).length > 0) {
            throw ApiError.validation([{ path: '', message: 'this operation takes no request body' }]);
          }
        }
        if (spec.method === 'POST' && spec.auth !== false) {
          if ((await beginIdempotentRequest(deps, actor, req, reply)) === 'replayed') return reply;
        }
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
            return reply.status(result.status ?? spec.successStatus ?? 200).send({
              success: true,
              data: result.data,
              ...(result.meta ? { meta: result.meta } : {}),
            });
        }
      },
    });
  }
}
