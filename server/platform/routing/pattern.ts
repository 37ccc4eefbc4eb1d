/**
 * The path patterns of `_redirects` sources and `_headers` blocks, in the syntax Netlify and
 * Cloudflare Pages share: literal segments, `:name` placeholders (one whole segment's text) and
 * one `*` splat (anything, slashes included; its value is `:splat`).
 *
 * Written by hand rather than with picomatch: picomatch speaks shell globs, where `*` stops at a
 * `/`, `**`, `?`, `{a,b}`, `!(x)` and `[abc]` mean something, and there are no named captures,
 * so every one of those would have to be escaped or undone to get this much smaller syntax. A
 * pattern here becomes one anchored RegExp, built once per deployment.
 */

/** A placeholder in a pattern or destination: a colon, a letter, then letters, digits or `_`. */
export const PLACEHOLDER = /:([A-Za-z]\w*)/g;

/** A pattern compiled for matching. */
export interface PathPattern {
  /** As written. */
  source: string;
  /** Without splat or placeholder: the one path it matches, without a trailing slash (`trimSlash`). */
  key: string | null;
  /** With a splat or placeholders: matched against the whole path; groups in `names` order. */
  regex: RegExp | null;
  /** The placeholders' names in order; `splat` for `*`. */
  names: string[];
  /** The literal text before the first placeholder or splat: a cheap test before the RegExp. */
  prefix: string;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** `/about/` -> `/about`; `/` stays. Rules match a path with or without its trailing slash. */
export function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * Compiles a path pattern, or says why it cannot be: the message a warning shows. A path segment
 * may hold one placeholder or the splat, never two: two unbounded parts side by side make a
 * RegExp that backtracks for minutes on a long crafted path.
 */
export function compilePattern(source: string): PathPattern | string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) || source.startsWith('//')) {
    return `"${source}" names a host: only paths on this deployment (starting with /) can be matched`;
  }
  if (!source.startsWith('/')) return `"${source}" is not a path: it must start with /`;
  if (source.includes('?')) {
    return `"${source}" has a query string: rules match the path only (query conditions are not supported)`;
  }
  const splats = source.split('*').length - 1;
  if (splats > 1) return `"${source}" has ${splats} splats (*): a pattern may have one`;
  const names: string[] = [];
  for (const [, name] of source.matchAll(PLACEHOLDER)) {
    if (name === 'splat') return `"${source}" uses :splat, which is the name of what * matches`;
    if (names.includes(name!)) return `"${source}" has the placeholder :${name} twice`;
    names.push(name!);
  }
  for (const segment of source.split('/')) {
    const parts = (segment.match(PLACEHOLDER)?.length ?? 0) + (segment.includes('*') ? 1 : 0);
    if (parts > 1) {
      return `"${source}" has more than one placeholder or splat in the segment "${segment}": separate them with /`;
    }
  }
  if (splats === 0 && names.length === 0) {
    return { source, key: trimSlash(source), regex: null, names: [], prefix: trimSlash(source) };
  }

  // A trailing slash is optional on both sides, and a trailing `/*` also matches the folder itself
  // (`/blog/*` matches `/blog`, `/blog/` and `/blog/2024/post`, its splat empty for the first two).
  let body = trimSlash(source);
  let tail = '/?';
  if (body.endsWith('/*')) {
    body = body.slice(0, -2);
    tail = '(?:/(.*))?';
  }
  const order: string[] = [];
  const regexBody = body
    .split(/(\*|:[A-Za-z]\w*)/)
    .map((part) => {
      if (part === '*') {
        order.push('splat');
        return '(.*)';
      }
      if (/^:[A-Za-z]\w*$/.test(part)) {
        order.push(part.slice(1));
        return '([^/]+)';
      }
      return escapeRegex(part);
    })
    .join('');
  if (tail !== '/?') order.push('splat');
  // A trailing `/*` without its slash, so that `/blog/*` lets `/blog` through to the RegExp.
  const first = source.search(/\*|:[A-Za-z]/);
  const prefix = tail === '/?' ? source.slice(0, first) : source.slice(0, Math.min(first, body.length));
  // `s`: a splat matches a decoded line break too.
  return { source, key: null, regex: new RegExp(`^${regexBody}${tail}$`, 's'), names: order, prefix };
}

/**
 * The values a path gives a pattern's placeholders (`splat` for `*`), or null when it does not
 * match. `trimmed` is `trimSlash(path)`, worked out once by the caller for every rule.
 */
export function matchPattern(
  pattern: PathPattern,
  path: string,
  trimmed: string,
): Record<string, string> | null {
  if (pattern.regex === null) return pattern.key === trimmed ? {} : null;
  if (!path.startsWith(pattern.prefix)) return null;
  const found = pattern.regex.exec(path);
  if (!found) return null;
  const params: Record<string, string> = {};
  pattern.names.forEach((name, i) => {
    params[name] = found[i + 1] ?? '';
  });
  return params;
}

/** A text with placeholders, split once: literal parts and the names between them. */
export type Template = readonly (string | { name: string })[];

/** Splits `text` at its placeholders (`:name`) that are among `names`; other colons stay text. */
export function compileTemplate(text: string, names: readonly string[]): Template {
  const parts: (string | { name: string })[] = [];
  let last = 0;
  for (const found of text.matchAll(PLACEHOLDER)) {
    const name = found[1]!;
    if (!names.includes(name)) continue;
    parts.push(text.slice(last, found.index));
    parts.push({ name });
    last = found.index + found[0].length;
  }
  parts.push(text.slice(last));
  return parts.filter((p) => p !== '');
}

/** The placeholders of `text` (`:name`) that are not among `names`. */
export function unknownPlaceholders(text: string, names: readonly string[]): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((name) => !names.includes(name));
}

/** Fills a template in: each placeholder's value through `encode`. */
export function fillTemplate(
  template: Template,
  params: Record<string, string>,
  encode: (value: string) => string,
): string {
  let out = '';
  for (const part of template) out += typeof part === 'string' ? part : encode(params[part.name] ?? '');
  return out;
}

/**
 * A decoded path value made fit for a URL or a header again: percent-encoded as in a path (so a
 * decoded `%0d%0a`, a space or a non-ASCII letter can never end up raw in a header), `?` and `#`
 * included, `/` kept.
 */
export function encodePathValue(value: string): string {
  return encodeURI(value).replace(/[?#]/g, (c) => (c === '?' ? '%3F' : '%23'));
}

/** The value as it is: for rewrites, which look up the decoded path among the deployment's files. */
export const asIs = (value: string): string => value;
