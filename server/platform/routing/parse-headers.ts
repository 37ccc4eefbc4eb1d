import { compilePattern } from './pattern.ts';
import { count, linesOf, warningList, type RuleWarning } from './rule-warning.ts';

/** One block of `_headers`: a path pattern and the headers of the answers for matching paths. */
export interface HeaderRule {
  /** Line number of the pattern, from 1. */
  line: number;
  /** A path pattern, as in `_redirects`: `:placeholders` and one `*`. */
  path: string;
  /**
   * Headers to set, in order, as written (`:splat` and the placeholders may appear in values). A
   * name given twice in one block has its values joined with `, `, except `Set-Cookie`.
   */
  set: [name: string, value: string][];
  /** Headers to remove (`! Name`), lower case. */
  detach: string[];
}

/** Cloudflare Pages' limits. */
export const HEADER_LIMITS = { rules: 100, lineLength: 2000 } as const;

/**
 * Fields the edge owns: how the body is framed and encoded, the connection, and which deployment
 * answered. Changing them would break answers rather than shape them.
 */
const RESERVED = new Set([
  'connection',
  'content-encoding',
  'content-length',
  'content-range',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** An HTTP field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Why a header name cannot be set or removed here, or null. */
function nameProblem(name: string): string | null {
  if (!TOKEN.test(name)) return `"${name}" is not a valid header name`;
  const lower = name.toLowerCase();
  if (RESERVED.has(lower) || lower.startsWith('x-slipway-')) {
    return `${name} is set by the edge itself and cannot be changed in _headers`;
  }
  return null;
}

/**
 * Parses a `_headers` file: a line starting with `/` opens a block, the lines under it (indented,
 * as is the custom) are `Name: value` or `! Name`. Every block whose pattern matches a path applies
 * to its answers. Bad lines are skipped with their number and why, never an error; a block whose
 * pattern is bad is skipped whole, once. Pure, like parseRedirects.
 */
export function parseHeaders(text: string): { rules: HeaderRule[]; warnings: RuleWarning[] } {
  const rules: HeaderRule[] = [];
  const warnings = warningList();
  /** The open block; null before the first pattern and while a skipped block's lines pass. */
  let rule: HeaderRule | null = null;
  let skipping = false;
  let blocks = 0;

  const close = () => {
    if (rule && rule.set.length === 0 && rule.detach.length === 0) {
      warnings.add(rule.line, `no headers under "${rule.path}"`);
    } else if (rule) {
      rules.push(rule);
    }
    rule = null;
  };

  linesOf(text).forEach((raw, i) => {
    const line = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    // As Cloudflare reads it: a line that looks like a path or URL opens a block, indented or not.
    const isPattern = trimmed.startsWith('/') || /^\S+:\/\//.test(trimmed);
    if (trimmed.length > HEADER_LIMITS.lineLength) {
      if (isPattern) {
        close();
        skipping = true;
      }
      warnings.add(
        line,
        `longer than ${count(HEADER_LIMITS.lineLength)} characters (the limit)` +
          (isPattern ? '; the headers under it are skipped too' : ''),
      );
      return;
    }
    if (isPattern) {
      close();
      skipping = true;
      if (++blocks > HEADER_LIMITS.rules) {
        warnings.add(
          line,
          `more than ${count(HEADER_LIMITS.rules)} header rules (the limit); the headers under it are skipped too`,
        );
        return;
      }
      const pattern = compilePattern(trimmed);
      if (typeof pattern === 'string') {
        warnings.add(line, `${pattern}; the headers under it are skipped too`);
        return;
      }
      skipping = false;
      rule = { line, path: trimmed, set: [], detach: [] };
      return;
    }
    if (skipping) return;
    if (!rule) {
      warnings.add(
        line,
        `"${trimmed}" comes before any path: a block starts with a path such as /* on a line of its own`,
      );
      return;
    }
    const open: HeaderRule = rule;
    if (trimmed.startsWith('!')) {
      const name = trimmed.slice(1).trim();
      const problem = nameProblem(name);
      if (problem) warnings.add(line, problem);
      else open.detach.push(name.toLowerCase());
      return;
    }
    const colon = trimmed.indexOf(':');
    if (colon === -1) {
      warnings.add(line, `"${trimmed}" is not "Name: value" or "! Name"`);
      return;
    }
    const name = trimmed.slice(0, colon).trim();
    const value = trimmed.slice(colon + 1).trim();
    const problem = nameProblem(name);
    if (problem) {
      warnings.add(line, problem);
      return;
    }
    if (value === '') {
      warnings.add(line, `${name} has no value (to remove a header, write "! ${name}")`);
      return;
    }
    // Node refuses control characters, and would send anything past Latin-1 as other bytes.
    if (/[^\t\x20-\x7e]/.test(value)) {
      warnings.add(
        line,
        `the value of ${name} has characters other than printable ASCII: percent-encode them`,
      );
      return;
    }
    const lower = name.toLowerCase();
    const same = lower === 'set-cookie' ? undefined : open.set.find(([n]) => n.toLowerCase() === lower);
    if (same) same[1] = `${same[1]}, ${value}`;
    else open.set.push([name, value]);
  });
  close();
  return { rules, warnings: warnings.done() };
}
