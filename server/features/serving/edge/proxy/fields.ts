import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { DEPLOYMENT_HEADER } from '../../../../core/edge-headers.ts';

/** Headers about one connection, which a proxy must not pass on (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Request headers never passed on as received: the hop-by-hop ones; `expect`, which the edge's
 * own server has answered already (`100 Continue`); and the X-Forwarded-* fields the edge sets.
 */
const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  'expect',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
]);

/** The names a `Connection` header lists: hop-by-hop too, for that one message (RFC 9110 7.6.1). */
function connectionOptions(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  const names = String(value)
    .split(',')
    .map((h) => h.trim().toLowerCase());
  return names.length === 1 && (names[0] === 'keep-alive' || names[0] === 'close') ? null : new Set(names);
}

/** The X-Forwarded-* fields for a request from `req`'s client, as [name, value, ...]. */
export function forwardedFields(req: IncomingMessage): string[] {
  const client = req.socket.remoteAddress ?? '';
  const prior = req.headers['x-forwarded-for'];
  return [
    'x-forwarded-for',
    prior ? `${String(prior)}, ${client}` : client,
    'x-forwarded-host',
    req.headers.host ?? '',
    'x-forwarded-proto',
    (req.socket as TLSSocket).encrypted ? 'https' : 'http',
  ];
}

/**
 * The request's end-to-end fields as a flat [name, value, ...] list, the X-Forwarded-* ones last.
 * From `req.headers`, so that what the edge removed there (its probe token) stays removed.
 */
export function requestFields(req: IncomingMessage): string[] {
  const headers = req.headers;
  const named = connectionOptions(headers.connection);
  const out: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || NOT_FORWARDED.has(name) || named?.has(name)) continue;
    if (typeof value === 'string') out.push(name, value);
    else for (const v of value) out.push(name, v);
  }
  out.push(...forwardedFields(req));
  return out;
}

/** The response's end-to-end fields for `writeHead`, after the deployment's name. */
export function responseFields(deploymentId: string, headers: IncomingHttpHeaders): string[] {
  const named = connectionOptions(headers.connection);
  const out = [DEPLOYMENT_HEADER, deploymentId];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || named?.has(name)) continue;
    if (typeof value === 'string') out.push(name, value);
    else for (const v of value) out.push(name, v);
  }
  return out;
}

/** The response's end-to-end fields as an object, for a shaper to change. */
export function responseObject(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = connectionOptions(headers.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named?.has(name)) out[name] = value;
  }
  return out;
}

/** Whether a request carries a body (RFC 9112 6.3): a GET without one is sent without a stream. */
export const hasBody = (req: IncomingMessage) =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
