import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { PageMeta } from '../../../api/schemas/common.ts';
import type { Actor, Deps } from '../deps/deps.ts';
import type { Deprecation, Method, RouteContract } from '../../../api/routes/contract.ts';
import type { ScopedAccess } from './scope.ts';
import type { SseFrame } from './sse.ts';

/** What a route of the API is: its contract and handler (registered by server/platform/http/route.ts). */

export type { Deprecation, Method };

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

/**
 * A route of the service: its wire contract (api/routes, shared with the client and the OpenAPI
 * document), plus what only the server knows: limits, access rules and the handler.
 */
export interface RouteSpec<
  B extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  P extends z.ZodType = z.ZodType,
> extends RouteContract<B, Q, P> {
  /** Largest JSON body in bytes, when a route needs more than the server's 1 MiB. */
  bodyLimit?: number;
  /** The 413's message for a body over `bodyLimit`, naming this route's limit. */
  bodyTooLarge?: string;
  /**
   * Only the GitHub App's own token (`slipway token create --github-app`) may call it; everyone
   * else gets 403 before the body is read (server/platform/http/pipeline.ts).
   */
  githubApp?: true;
  /**
   * An upload that an upload grant (`X-Slipway-Upload-Grant`, from `POST .../files/missing`)
   * keeps off the hourly rate limit (server/platform/http/upload-grant.ts).
   */
  uploadGrant?: true;
  /** Open to tokens from GitHub Actions trust policies, within their project (server/platform/http/scope.ts). */
  scoped?: ScopedAccess;
  handler: (ctx: HandlerContext<z.infer<B>, z.infer<Q>, z.infer<P>>) => Promise<HandlerResult>;
}

/** Keeps the generic types of a spec while storing it in a plain list. */
export const route = <B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  spec: RouteSpec<B, Q, P>,
): RouteSpec => spec;
