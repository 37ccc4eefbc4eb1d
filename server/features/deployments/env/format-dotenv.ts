/**
 * Writes variables as a `.env` file that the `dotenv` parser (v17, `lib/main.js` `parse`) reads
 * back to exactly the same values. The rules follow that parser, not a shell:
 *
 * - it normalises every CR (`\r\n` and lone `\r`) of the file to LF before parsing;
 * - a bare value is cut at `#` and at the end of the line, then trimmed;
 * - `'...'`, `` `...` `` and `"..."` keep their content verbatim (it may span lines), except that
 *   inside double quotes the two-character sequences `\n` and `\r` become LF and CR; there is no
 *   other escape, so a backslash can never be escaped;
 * - a backslash right before the closing quote lets the quoted value run on to a later quote, so a
 *   quoted value must not end with a backslash.
 */

/** One variable the env format cannot carry, with why. */
export interface Unrepresentable {
  key: string;
  reason: string;
}

export type DotenvResult = { ok: true; text: string } | { ok: false; problems: Unrepresentable[] };

// No whitespace (trim would eat it; `\s` also covers the line terminators U+2028/U+2029), no quote
// (dotenv strips matching quotes at the ends), no `#` (comment), no `$` (keeps `${VAR}` text
// visibly literal by quoting it, as dotenv-expand and shells would otherwise expand it).
const BARE = /^[^\s'"`#$]+$/;
// The last resort, unquoted: quotes inside are kept verbatim as long as the value does not start
// with one (it would be read as a quoted value), has no `#`, no line break (`m`-flag `^`/`$` of
// dotenv's regexes also stop at U+2028/U+2029) and no whitespace at either end.
const LOOSE_BARE = /^[^\s'"`#](?:[^#\r\n\u2028\u2029]*[^\s#])?$/;
const LINE_BREAK = /[\r\n]/;

/** The value written after `KEY=`, or a reason why dotenv cannot read it back. */
export function quoteDotenvValue(value: string): { ok: true; text: string } | { ok: false; reason: string } {
  if (value === '') return { ok: true, text: "''" };
  if (BARE.test(value)) return { ok: true, text: value };
  const endsWithBackslash = value.endsWith('\\');
  // Double quotes with `\n`/`\r` escapes keep a multi-line value on one line, and are the only
  // way to carry a CR. They cannot hold `"` nor a literal backslash followed by `n` or `r`.
  const doubleOk = !endsWithBackslash && !value.includes('"') && !/\\[nr]/.test(value);
  const asDouble = () => `"${value.replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
  if (LINE_BREAK.test(value) && doubleOk) return { ok: true, text: asDouble() };
  if (!endsWithBackslash && !value.includes('\r')) {
    if (!value.includes("'")) return { ok: true, text: `'${value}'` };
    if (!value.includes('`')) return { ok: true, text: `\`${value}\`` };
  }
  if (doubleOk) return { ok: true, text: asDouble() };
  if (LOOSE_BARE.test(value)) return { ok: true, text: value };
  return { ok: false, reason: reasonFor(value, endsWithBackslash) };
}

const NEEDS_QUOTES = 'it needs quotes (whitespace at an end, #, a line break or a leading quote)';

function reasonFor(value: string, endsWithBackslash: boolean): string {
  if (endsWithBackslash)
    return `it ends with a backslash, which only an unquoted value can, but ${NEEDS_QUOTES}`;
  if (value.includes('\r')) {
    return 'it holds a carriage return together with a double quote or a literal \\n or \\r';
  }
  return `it holds ' and \` together with " or a literal \\n or \\r, and ${NEEDS_QUOTES}`;
}
/** `KEY=value` lines, in the order given; fails listing every variable that cannot be written. */
export function formatDotenv(vars: ReadonlyArray<{ key: string; value: string }>): DotenvResult {
  const lines: string[] = [];
  const problems: Unrepresentable[] = [];
  for (const { key, value } of vars) {
    const quoted = quoteDotenvValue(value);
    if (quoted.ok) lines.push(`${key}=${quoted.text}`);
    else problems.push({ key, reason: quoted.reason });
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, text: lines.length === 0 ? '' : `${lines.join('\n')}\n` };
}
