import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { PageMeta } from '../../api/schemas/common.ts';
import type { Actor, Deps } from '../services/deps.ts';
import type { ScopedAccess } from './scope.ts';
import type { SseFrame } from './sse.ts';

/** What a route of the API is: its method, path, schemas and handler (registered by server/http/route.ts). */

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

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
  /** Schema of `data` (or of one list item): documents the answer and serialises it. */
  response?: z.ZodType;
  /**
   * The answer's shape: `data` (default) and `list` in the envelope, `deleted` as
   * `{ success, message }`, `bare` the response schema alone (the versioned interface), `text` not JSON.
   */
  responseKind?: 'data' | 'list' | 'deleted' | 'text' | 'bare';
  successStatus?: number;
  deprecated?: Deprecation;
  /**
   * The handler reads the request's bytes itself, as a stream (`req.body`, sent with
   * `Content-Type: application/octet-stream`); no JSON body is parsed or refused.
   */
  rawBody?: boolean;
  /**
   * Takes any body of any content type, up to 64 KiB, and ignores it: a deploy hook's URL is
   * called by systems that send their own payloads (a CMS's JSON, a form), which say nothing to us.
   */
  anyBody?: true;
  /** Largest JSON body in bytes, when a route needs more than the server's 1 MiB. */
  bodyLimit?: number;
  /** The 413's message for a body over `bodyLimit`, naming this route's limit. */
  bodyTooLarge?: string;
  /**
   * Only the GitHub App's own token (`slipway token create --github-app`) may call it; everyone
   * else gets 403 before the body is read (server/http/pipeline.ts).
   */
  githubApp?: true;
  /**
   * An upload that an upload grant (`X-Slipway-Upload-Grant`, from `POST .../files/missing`)
   * keeps off the hourly rate limit (server/services/uploads/upload-grant.ts).
   */
  uploadGrant?: true;
  /** Open to tokens from GitHub Actions trust policies, within their project (server/http/scope.ts). */
  scoped?: ScopedAccess;
  handler: (ctx: HandlerContext<z.infer<B>, z.infer<Q>, z.infer<P>>) => Promise<HandlerResult>;
}

/** Keeps the generic types of a spec while storing it in a plain list. */
export const route = <B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  spec: RouteSpec<B, Q, P>,
): RouteSpec => spec;
