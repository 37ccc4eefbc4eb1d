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
  const st: HeaderParse = { rules: [], warnings: warningList(), rule: null, skipping: false, blocks: 0 };
  linesOf(text).forEach((raw, i) => readLine(st, raw.trim(), i + 1));
  close(st);
  return { rules: st.rules, warnings: st.warnings.done() };
}

/** What parseHeaders keeps between lines. */
interface HeaderParse {
  rules: HeaderRule[];
  warnings: ReturnType<typeof warningList>;
  /** The open block; null before the first pattern and while a skipped block's lines pass. */
  rule: HeaderRule | null;
  skipping: boolean;
  blocks: number;
}

/** Ends the open block: kept, unless it has no headers. */
function close(st: HeaderParse): void {
  const { rule } = st;
  if (rule && rule.set.length === 0 && rule.detach.length === 0) {
    st.warnings.add(rule.line, `no headers under "${rule.path}"`);
  } else if (rule) {
    st.rules.push(rule);
  }
  st.rule = null;
}

/** One line (`line`, from 1), trimmed. */
function readLine(st: HeaderParse, trimmed: string, line: number): void {
  if (trimmed === '' || trimmed.startsWith('#')) return;
  // As Cloudflare reads it: a line that looks like a path or URL opens a block, indented or not.
  const isPattern = trimmed.startsWith('/') || /^\S+:\/\//.test(trimmed);
  if (trimmed.length > HEADER_LIMITS.lineLength) {
    if (isPattern) {
      close(st);
      st.skipping = true;
    }
    st.warnings.add(
      line,
      `longer than ${count(HEADER_LIMITS.lineLength)} characters (the limit)` +
        (isPattern ? '; the headers under it are skipped too' : ''),
    );
    return;
  }
  if (isPattern) return openBlock(st, trimmed, line);
  if (st.skipping) return;
  if (!st.rule) {
    st.warnings.add(
      line,
      `"${trimmed}" comes before any path: a block starts with a path such as /* on a line of its own`,
    );
    return;
  }
  if (trimmed.startsWith('!')) return detachLine(st, st.rule, trimmed, line);
  setLine(st, st.rule, trimmed, line);
}

/** A pattern's line: closes the open block and opens its own, unless past the limit or bad. */
function openBlock(st: HeaderParse, trimmed: string, line: number): void {
  close(st);
  st.skipping = true;
  if (++st.blocks > HEADER_LIMITS.rules) {
    st.warnings.add(
      line,
      `more than ${count(HEADER_LIMITS.rules)} header rules (the limit); the headers under it are skipped too`,
    );
    return;
  }
  const pattern = compilePattern(trimmed);
  if (typeof pattern === 'string') {
    st.warnings.add(line, `${pattern}; the headers under it are skipped too`);
    return;
  }
  st.skipping = false;
  st.rule = { line, path: trimmed, set: [], detach: [] };
}

/** `! Name`. */
function detachLine(st: HeaderParse, open: HeaderRule, trimmed: string, line: number): void {
  const name = trimmed.slice(1).trim();
  const problem = nameProblem(name);
  if (problem) st.warnings.add(line, problem);
  else open.detach.push(name.toLowerCase());
}

/** `Name: value`. */
function setLine(st: HeaderParse, open: HeaderRule, trimmed: string, line: number): void {
  const colon = trimmed.indexOf(':');
  if (colon === -1) {
    st.warnings.add(line, `"${trimmed}" is not "Name: value" or "! Name"`);
    return;
  }
  const name = trimmed.slice(0, colon).trim();
  const value = trimmed.slice(colon + 1).trim();
  const problem = nameProblem(name);
  if (problem) {
    st.warnings.add(line, problem);
    return;
  }
  if (value === '') {
    st.warnings.add(line, `${name} has no value (to remove a header, write "! ${name}")`);
    return;
  }
  // Node refuses control characters, and would send anything past Latin-1 as other bytes.
  if (/[^\t\x20-\x7e]/.test(value)) {
    st.warnings.add(
      line,
      `the value of ${name} has characters other than printable ASCII: percent-encode them`,
    );
    return;
  }
  const lower = name.toLowerCase();
  const same = lower === 'set-cookie' ? undefined : open.set.find(([n]) => n.toLowerCase() === lower);
  if (same) same[1] = `${same[1]}, ${value}`;
  else open.set.push([name, value]);
}
