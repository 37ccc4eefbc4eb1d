import {
  ServerResponse,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
} from 'node:http';

/**
 * Cache-Control directives dropped from a protected host's answers: those that let a shared
 * cache keep the answer (`public`, `s-maxage`) or speak only to shared caches
 * (`proxy-revalidate`), and `private` itself, which goes first on its own (a `private="field"`
 * would privatise one field only).
 */
const SHARED_DIRECTIVES = new Set(['public', 's-maxage', 'proxy-revalidate', 'private']);

/**
 * Fields that tell a CDN how to cache over Cache-Control (RFC 9213's `CDN-Cache-Control` and its
 * vendors' `<name>-CDN-Cache-Control`, and `Surrogate-Control`): a CDN that reads them would keep
 * a protected page whatever Cache-Control says, so a protected host never sends them.
 */
export function isCdnCacheField(name: string): boolean {
  const n = name.toLowerCase();
  return n === 'surrogate-control' || n === 'cdn-cache-control' || n.endsWith('-cdn-cache-control');
}

/** The directives of a Cache-Control value, split at commas outside quoted strings. */
function directivesOf(value: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '"' && value[i - 1] !== '\\') quoted = !quoted;
    else if (c === ',' && !quoted) {
      out.push(value.slice(start, i));
      start = i + 1;
    }
  }
  out.push(value.slice(start));
  return out.map((d) => d.trim()).filter((d) => d !== '');
}

/**
 * Cache-Control for an answer of a protected host: `private` first, then what the app, its
 * `_headers` or the edge said that a browser's own cache reads (`max-age`, `no-cache`,
 * `no-store`, `immutable`, `must-revalidate`...), without what would let a shared cache keep it.
 *
 *     public, max-age=31536000, immutable -> private, max-age=31536000, immutable
 *     public, s-maxage=600, max-age=60     -> private, max-age=60
 *     (none)                               -> private
 */
export function privateCacheControl(values: readonly (string | number)[]): string {
  // Answers repeat a handful of values (a site's files, an app's pages): each is worked out once.
  const key = values.length === 0 ? '' : values.length === 1 ? String(values[0]) : values.join('\n');
  let made = madeBefore.get(key);
  if (made === undefined) {
    if (madeBefore.size >= MADE_BEFORE_MAX) madeBefore.clear();
    made = makePrivate(values);
    madeBefore.set(key, made);
  }
  return made;
}

/** privateCacheControl's answers by their values, at most MADE_BEFORE_MAX of them. */
const madeBefore = new Map<string, string>();
const MADE_BEFORE_MAX = 1000;

function makePrivate(values: readonly (string | number)[]): string {
  const kept: string[] = ['private'];
  for (const value of values) {
    for (const directive of directivesOf(String(value))) {
      const eq = directive.indexOf('=');
      const name = (eq < 0 ? directive : directive.slice(0, eq)).trim().toLowerCase();
      if (!SHARED_DIRECTIVES.has(name) && !kept.includes(directive)) kept.push(directive);
    }
  }
  return kept.join(', ');
}

type Fields = OutgoingHttpHeaders | OutgoingHttpHeader[];

/** A field's values as a list. */
const valuesOf = (v: OutgoingHttpHeader | undefined): (string | number)[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];

/**
 * The fields `writeHead` was given, made private: Cache-Control merged (see privateCacheControl)
 * with the value given or set before with setHeader, CDN fields left out (and taken off the
 * response). A new list or object: the edge reuses the lists it is given for other answers.
 */
function privateFields(res: ServerResponse, given: Fields | undefined): Fields | undefined {
  for (const name of res.getHeaderNames()) if (isCdnCacheField(name)) res.removeHeader(name);
  if (given === undefined) {
    res.setHeader('cache-control', privateCacheControl(valuesOf(res.getHeader('cache-control'))));
    return undefined;
  }
  const values: (string | number)[] = [];
  let found = false;
  if (Array.isArray(given)) {
    const out: OutgoingHttpHeader[] = [];
    const keep = (name: string, value: OutgoingHttpHeader) => {
      if (name.toLowerCase() === 'cache-control') {
        found = true;
        values.push(...valuesOf(value));
      } else if (!isCdnCacheField(name)) out.push(name, value);
    };
    // A flat list, name, value, name, value... (or, rarely, a list of pairs).
    if (Array.isArray(given[0])) {
      for (const [name, value] of given as unknown as [string, OutgoingHttpHeader][]) keep(name, value);
    } else {
      for (let i = 0; i < given.length; i += 2) keep(String(given[i]), given[i + 1]!);
    }
    if (!found) values.push(...valuesOf(res.getHeader('cache-control')));
    out.push('cache-control', privateCacheControl(values));
    return out;
  }
  const out: OutgoingHttpHeaders = {};
  for (const name of Object.keys(given)) {
    const value = given[name];
    if (name.toLowerCase() === 'cache-control') {
      found = true;
      values.push(...valuesOf(value));
    } else if (!isCdnCacheField(name)) out[name] = value;
  }
  if (!found) values.push(...valuesOf(res.getHeader('cache-control')));
  out['cache-control'] = privateCacheControl(values);
  return out;
}

/**
 * The edge's responses. Once a protected host's request has passed the gate (`privateAnswer`),
 * whatever writes the answer (static files, a server app through the proxy, a `_redirects` rule,
 * one of the edge's pages, Node itself for an implicit head), its head goes out private: one
 * place, so that no path can forget it. Other answers pay one test of a field.
 */
export class EdgeResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Set when the answer is a protected host's: its head is made private (privateFields). */
  privateAnswer = false;

  override writeHead(statusCode: number, reasonOrFields?: string | Fields, fields?: Fields): this {
    if (!this.privateAnswer) return super.writeHead(statusCode, reasonOrFields as string, fields);
    const reason = typeof reasonOrFields === 'string' ? reasonOrFields : undefined;
    const given = typeof reasonOrFields === 'string' ? fields : (fields ?? reasonOrFields);
    return super.writeHead(statusCode, reason, privateFields(this, given));
  }
}

/** Responses made private that are not EdgeResponses (see markPrivate). */
const patched = new WeakSet<ServerResponse>();

/** Makes a response's answer private (see EdgeResponse), before anything of it is written. */
export function markPrivate(res: ServerResponse): void {
  if (res instanceof EdgeResponse) {
    res.privateAnswer = true;
    return;
  }
  // A server made without EdgeResponse that shares the edge's handler: the same, on this one.
  patched.add(res);
  const write = res.writeHead.bind(res) as (s: number, r?: string, f?: Fields) => ServerResponse;
  res.writeHead = (statusCode: number, reasonOrFields?: string | Fields, fields?: Fields) => {
    const reason = typeof reasonOrFields === 'string' ? reasonOrFields : undefined;
    const given = typeof reasonOrFields === 'string' ? fields : (fields ?? reasonOrFields);
    return write(statusCode, reason, privateFields(res, given));
  };
}

/** Whether a response was made private (it passed a protected host's gate). */
export function isPrivate(res: ServerResponse): boolean {
  return res instanceof EdgeResponse ? res.privateAnswer : patched.has(res);
}
