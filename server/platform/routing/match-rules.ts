import type { HeaderRule } from './parse-headers.ts';
import type { RedirectRule } from './parse-redirects.ts';
import {
  asIs,
  compilePattern,
  compileTemplate,
  encodePathValue,
  fillTemplate,
  matchPattern,
  trimSlash,
  type PathPattern,
  type Template,
} from './pattern.ts';

/** What a `_redirects` rule makes of a request. */
export type RuleAnswer =
  | {
      kind: 'redirect';
      status: 301 | 302 | 303 | 307 | 308;
      /** The Location: placeholders filled in percent-encoded, the request's query passed on. */
      location: string;
    }
  | {
      kind: 'rewrite';
      /** 200: the target's answer; 404: the target's content with status 404 (a custom not-found page). */
      status: 200 | 404;
      /** The target path, decoded: a file path of a static deployment. */
      path: string;
      /** The target as a request URL (encoded path and query), for a server app. */
      url: string;
    };

/** The headers of one matching `_headers` block: set (name as written, lower case, value) and detached (lower case). */
export interface HeaderMatch {
  set: readonly (readonly [name: string, lower: string, value: string])[];
  detach: readonly string[];
}

/** A deployment's rules, compiled once and matched per request. */
export interface RoutingRules {
  readonly redirectCount: number;
  readonly headerCount: number;
  /**
   * The rule that answers a request, if any: the topmost rule whose source matches `path` (the
   * decoded request path). When a file exists at the path (`fileExists`, asked only when needed),
   * only rules forced with `!` apply (Netlify's shadowing). `url` is the raw request URL, whose
   * query a redirect passes on.
   */
  redirect(path: string, url: string, fileExists: (path: string) => boolean): RuleAnswer | null;
  /** Every `_headers` block matching the decoded request path, in file order; null when none. */
  headers(path: string): HeaderMatch[] | null;
}

/** A deployment without `_redirects` or `_headers`. Compare with `===`: the edge's warm path does. */
export const NO_RULES: RoutingRules = Object.freeze({
  redirectCount: 0,
  headerCount: 0,
  redirect: () => null,
  headers: () => null,
});

interface CompiledRedirect {
  index: number;
  pattern: PathPattern;
  force: boolean;
  status: RedirectRule['status'];
  /** Redirects: the destination with non-ASCII percent-encoded; rewrites: its path, decoded. */
  target: Template;
  /** Rewrites: the destination's own query (`?a=b`, placeholders filled in), which replaces the request's; empty if none. */
  query: Template;
}

interface CompiledHeaders {
  pattern: PathPattern;
  /** The same object for every request when no value has a placeholder. */
  constant: HeaderMatch | null;
  set: readonly (readonly [name: string, lower: string, value: Template])[];
  detach: readonly string[];
}

const decodeSafely = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** Non-ASCII and control characters percent-encoded: a Location must be ASCII. */
const asciiOnly = (text: string): string => text.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));

/** The query string of a raw request URL, with its `?`; '' when there is none. */
function queryOf(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return '';
  const hash = url.indexOf('#', start);
  const query = hash === -1 ? url.slice(start) : url.slice(start, hash);
  return query === '?' ? '' : query;
}

/** Whether a Location names the same path and query as a request URL (fragments aside, decoded). */
function isSameAddress(location: string, url: string): boolean {
  const strip = (u: string) => decodeSafely(u.includes('#') ? u.slice(0, u.indexOf('#')) : u);
  return strip(location) === strip(url);
}

function compileRedirect(rule: RedirectRule, index: number): CompiledRedirect {
  const pattern = compilePattern(rule.from);
  // parseRedirects only lets through sources that compile.
  if (typeof pattern === 'string') throw new Error(`line ${rule.line}: ${pattern}`);
  const rewrite = rule.status === 200 || rule.status === 404;
  if (!rewrite) {
    const target = compileTemplate(rule.to, pattern.names).map((p) =>
      typeof p === 'string' ? asciiOnly(p) : p,
    );
    return { index, pattern, force: rule.force, status: rule.status, target, query: [] };
  }
  const hash = rule.to.indexOf('#');
  const withoutHash = hash === -1 ? rule.to : rule.to.slice(0, hash);
  const q = withoutHash.indexOf('?');
  const path = q === -1 ? withoutHash : withoutHash.slice(0, q);
  const query = q === -1 || q === withoutHash.length - 1 ? '' : withoutHash.slice(q);
  const target = compileTemplate(path, pattern.names).map((p) =>
    typeof p === 'string' ? decodeSafely(p) : p,
  );
  const queryTemplate = compileTemplate(query, pattern.names).map((p) =>
    typeof p === 'string' ? asciiOnly(p) : p,
  );
  return { index, pattern, force: rule.force, status: rule.status, target, query: queryTemplate };
}

function compileHeaders(rule: HeaderRule): CompiledHeaders {
  const pattern = compilePattern(rule.path);
  if (typeof pattern === 'string') throw new Error(`line ${rule.line}: ${pattern}`);
  const set = rule.set.map(
    ([name, value]) => [name, name.toLowerCase(), compileTemplate(value, pattern.names)] as const,
  );
  const constant = set.every(([, , t]) => t.every((p) => typeof p === 'string'))
    ? { set: set.map(([n, l, t]) => [n, l, fillTemplate(t, {}, asIs)] as const), detach: rule.detach }
    : null;
  return { pattern, constant, set, detach: rule.detach };
}

/**
 * Compiles parsed rules for matching: rules without `*` or placeholders in a Map by path (at most
 * 2,000), the others (at most 100) in order, each tested by its literal prefix before its RegExp.
 */
export function compileRules(
  redirects: readonly RedirectRule[],
  headers: readonly HeaderRule[],
): RoutingRules {
  if (redirects.length === 0 && headers.length === 0) return NO_RULES;
  /** By source without trailing slash: the first rule, and the first forced one. */
  const statics = new Map<string, { first: CompiledRedirect; forced: CompiledRedirect | null }>();
  const dynamics: CompiledRedirect[] = [];
  redirects.forEach((rule, index) => {
    const compiled = compileRedirect(rule, index);
    const key = compiled.pattern.key;
    if (key === null) {
      dynamics.push(compiled);
      return;
    }
    const entry = statics.get(key);
    if (!entry) statics.set(key, { first: compiled, forced: compiled.force ? compiled : null });
    else if (!entry.forced && compiled.force) entry.forced = compiled;
  });
  const headerRules = headers.map(compileHeaders);

  function find(path: string, trimmed: string, forcedOnly: boolean) {
    const entry = statics.get(trimmed);
    const fixed = entry ? (forcedOnly ? entry.forced : entry.first) : null;
    for (const rule of dynamics) {
      // Topmost wins: a dynamic rule below the matching fixed one cannot apply.
      if (fixed && rule.index > fixed.index) break;
      if (forcedOnly && !rule.force) continue;
      const params = matchPattern(rule.pattern, path, trimmed);
      if (params) return { rule, params };
    }
    return fixed ? { rule: fixed, params: {} } : null;
  }

  return {
    redirectCount: redirects.length,
    headerCount: headers.length,
    redirect(path, url, fileExists) {
      if (redirects.length === 0) return null;
      const trimmed = trimSlash(path);
      let hit = find(path, trimmed, false);
      if (hit && !hit.rule.force && fileExists(path)) hit = find(path, trimmed, true);
      if (!hit) return null;
      const { rule, params } = hit;
      if (rule.status === 200 || rule.status === 404) {
        const target = fillTemplate(rule.target, params, asIs);
        const query =
          rule.query.length > 0 ? fillTemplate(rule.query, params, encodePathValue) : queryOf(url);
        return { kind: 'rewrite', status: rule.status, path: target, url: encodePathValue(target) + query };
      }
      const destination = fillTemplate(rule.target, params, encodePathValue);
      // The destination's own query wins; without one, the request's is passed on (before any #fragment).
      const hash = destination.indexOf('#');
      const beforeHash = hash === -1 ? destination : destination.slice(0, hash);
      const location = beforeHash.includes('?')
        ? destination
        : beforeHash + queryOf(url) + (hash === -1 ? '' : destination.slice(hash));
      // Sources match with or without a trailing slash, so `/docs /docs/ 301!` would send
      // `/docs/` to itself for ever: a redirect to the very path and query asked for is passed over.
      if (location.startsWith('/') && isSameAddress(location, url)) return null;
      return { kind: 'redirect', status: rule.status, location };
    },
    headers(path) {
      if (headerRules.length === 0) return null;
      const trimmed = trimSlash(path);
      let out: HeaderMatch[] | null = null;
      for (const rule of headerRules) {
        const params = matchPattern(rule.pattern, path, trimmed);
        if (!params) continue;
        const match = rule.constant ?? {
          set: rule.set.map(([n, l, t]) => [n, l, fillTemplate(t, params, encodePathValue)] as const),
          detach: rule.detach,
        };
        (out ??= []).push(match);
      }
      return out;
    },
  };
}
