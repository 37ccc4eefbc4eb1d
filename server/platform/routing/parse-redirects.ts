import { compilePattern, trimSlash, unknownPlaceholders } from './pattern.ts';
import { count, linesOf, warningList, type RuleWarning } from './rule-warning.ts';

/** What a rule does: redirect (3xx), rewrite (200), or answer another file with 404. */
export type RedirectStatus = 200 | 301 | 302 | 303 | 307 | 308 | 404;

const STATUSES: ReadonlySet<number> = new Set([200, 301, 302, 303, 307, 308, 404]);

/** One rule of `_redirects`: `from to [status][!]`. */
export interface RedirectRule {
  /** Line number in the file, from 1. */
  line: number;
  /** A path pattern: literal segments, `:placeholders`, at most one `*`. */
  from: string;
  /** A path on this deployment or (for redirects only) an http(s) URL; may use `:splat` and the placeholders. */
  to: string;
  /** 301 unless given. */
  status: RedirectStatus;
  /** Written with `!`: applies even where a file exists at the path (otherwise the file wins). */
  force: boolean;
}

/** Cloudflare Pages' limits, which keep matching cheap: 2,000 rules without `*` or placeholders, 100 with. */
export const REDIRECT_LIMITS = { staticRules: 2000, dynamicRules: 100, lineLength: 1000 } as const;

/**
 * Parses a `_redirects` file. Each bad line is skipped and named with its number and why; a file
 * with bad lines is never an error. Pure: the edge and the build log read the same answer.
 */
export function parseRedirects(text: string): { rules: RedirectRule[]; warnings: RuleWarning[] } {
  const rules: RedirectRule[] = [];
  const warnings = warningList();
  /** The first rule for each source (trailing slash dropped): a later one applies only if it is forced and that one is not. */
  const seen = new Map<string, { line: number; force: boolean }>();
  let statics = 0;
  let dynamics = 0;

  linesOf(text).forEach((raw, i) => {
    const line = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    if (trimmed.length > REDIRECT_LIMITS.lineLength) {
      warnings.add(line, `longer than ${count(REDIRECT_LIMITS.lineLength)} characters (the limit)`);
      return;
    }
    let tokens = trimmed.split(/\s+/);
    // A comment may follow a rule; a `#` inside a destination (a fragment) is not one.
    const comment = tokens.findIndex((t, index) => index >= 1 && t.startsWith('#'));
    if (comment !== -1) tokens = tokens.slice(0, comment);
    const [from, to, statusText, ...rest] = tokens as [string, string?, string?, ...string[]];
    if (to === undefined) {
      warnings.add(line, `"${from}" has no destination: write "from to [status]"`);
      return;
    }
    if ([to, statusText, ...rest].some((t) => t !== undefined && isCondition(t))) {
      warnings.add(
        line,
        'conditions (query parameters, Country=, Language=, Role=, Cookie=...) are not supported: ' +
          'the rule is skipped rather than applied to every request',
      );
      return;
    }
    if (rest.length > 0) {
      warnings.add(line, `unexpected "${rest.join(' ')}" after the status: write "from to [status]"`);
      return;
    }
    const status = parseStatus(statusText);
    if (typeof status === 'string') {
      warnings.add(line, status);
      return;
    }
    const pattern = compilePattern(from);
    if (typeof pattern === 'string') {
      warnings.add(line, pattern);
      return;
    }
    const problem = destinationProblem(to, status.code, pattern.names);
    if (problem) {
      warnings.add(line, problem);
      return;
    }
    const key = pattern.key ?? trimSlash(from);
    const earlier = seen.get(key);
    if (earlier && (earlier.force || !status.force)) {
      warnings.add(line, `never applies: line ${earlier.line} has the same source and comes first`);
      return;
    }
    if (pattern.key !== null && ++statics > REDIRECT_LIMITS.staticRules) {
      warnings.add(
        line,
        `more than ${count(REDIRECT_LIMITS.staticRules)} rules without * or placeholders (the limit)`,
      );
      return;
    }
    if (pattern.key === null && ++dynamics > REDIRECT_LIMITS.dynamicRules) {
      warnings.add(
        line,
        `more than ${count(REDIRECT_LIMITS.dynamicRules)} rules with * or placeholders (the limit)`,
      );
      return;
    }
    seen.set(key, { line, force: status.force });
    rules.push({ line, from, to, status: status.code, force: status.force });
  });
  return { rules, warnings: warnings.done() };
}

/**
 * Netlify's conditions: `Country=us`, `Role=admin`, and query matches such as `id=:id` (written
 * between source and destination). A destination URL with a query (`/search?q=1`) is no condition.
 */
function isCondition(token: string): boolean {
  return /^[A-Za-z_][\w-]*=/.test(token);
}

function parseStatus(text: string | undefined): { code: RedirectStatus; force: boolean } | string {
  if (text === undefined) return { code: 301, force: false };
  const found = /^(\d{3})(!?)$/.exec(text);
  const code = found ? Number(found[1]) : NaN;
  if (!found || !STATUSES.has(code)) {
    return (
      `status "${text}" is not supported: use 301 (the default), 302, 303, 307 or 308 to redirect, ` +
      '200 to rewrite, 404 for a not-found page; add ! to apply it over an existing file'
    );
  }
  return { code: code as RedirectStatus, force: found[2] === '!' };
}

/** Why a destination cannot be used with this status and these placeholders, or null. */
function destinationProblem(to: string, status: RedirectStatus, names: readonly string[]): string | null {
  let placeholdersIn = to;
  if (/^https?:\/\//i.test(to)) {
    if (status === 200 || status === 404) {
      return (
        `a ${status} rule must point to a path on this deployment, not "${to}": ` +
        'the edge does not proxy to other sites (a 301, 302, 307 or 308 redirect can)'
      );
    }
    let url: URL;
    try {
      url = new URL(to);
    } catch {
      return `"${to}" is not a valid URL`;
    }
    if (!url.hostname) return `"${to}" has no host`;
    // Placeholders count in the path, query and fragment, not in `user:password@host:port`.
    const pathStart = to.indexOf('/', to.indexOf('//') + 2);
    placeholdersIn = pathStart === -1 ? '' : to.slice(pathStart);
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(to)) {
    return `"${to}" is not a path or an http(s):// URL`;
  } else if (to.startsWith('//')) {
    return `"${to}" starts with //, which browsers read as another host: write https://host/... or a path with one /`;
  } else if (!to.startsWith('/')) {
    return `the destination "${to}" must be a path starting with / or an http(s):// URL`;
  }
  const unknown = unknownPlaceholders(placeholdersIn, names);
  if (unknown.length > 0) {
    const name = unknown[0]!;
    return name === 'splat'
      ? `the destination uses :splat but the source has no *`
      : `the destination uses :${name}, which the source does not define`;
  }
  return null;
}
