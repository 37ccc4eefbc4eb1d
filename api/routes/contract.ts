import type { z } from 'zod';

/**
 * What a route of the API is on the wire: its method, URL, schemas and answer's shape. Each route
 * is written once, here in api/routes: the server adds its handler and access rules to the entry
 * (server/platform/http/route-spec.ts), the OpenAPI document is generated from it, and the client calls it
 * (api/client/envelope.ts), building its URL from the entry's path template.
 */

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

export interface Deprecation {
  /** When it was deprecated. */
  since: Date;
  /** When it stops working. */
  sunset: Date;
  /** Path of the operation that replaces it. */
  successor: string;
}

export interface RouteContract<
  B extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  P extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** Path template, e.g. `/v1/projects/:projectId`: each `:name` is a segment taken from `params`. */
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
   * The body is the request's raw bytes (`Content-Type: application/octet-stream`), not JSON.
   */
  rawBody?: boolean;
  /**
   * Takes any body of any content type, up to 64 KiB, and ignores it: a deploy hook's URL is
   * called by systems that send their own payloads (a CMS's JSON, a form), which say nothing to us.
   */
  anyBody?: true;
}

/** Keeps an entry's literal types (its schemas, its `responseKind`) for the server and the client. */
export const contract = <const C extends RouteContract>(entry: C): C => entry;

/** Encodes one path segment (ids, domain names, keys, e-mail addresses). */
export const seg = (value: string) => encodeURIComponent(value);

/** The values of a path template's `:name` segments. */
export type PathParams<E extends RouteContract> = E['params'] extends z.ZodType
  ? z.input<E['params']>
  : Record<string, never>;

/**
 * The path of one call: the entry's template with each `:name` replaced by its value, percent-encoded
 * as one segment. The only place a client URL is written.
 */
export function pathOf<E extends RouteContract>(entry: E, params: PathParams<E>): string {
  const values = params as Record<string, unknown>;
  return entry.url.replace(/:([A-Za-z0-9]+)/g, (_, name: string) => {
    const value = values[name];
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new Error(`${entry.url}: no value for :${name}`);
    }
    return seg(String(value));
  });
}
