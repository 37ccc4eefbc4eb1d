import type { OutgoingHttpHeaders } from 'node:http';
import type { HeaderMatch } from './match-rules.ts';

/*
 * How matching `_headers` blocks change an answer's headers, as Cloudflare Pages applies them:
 * block by block in file order, first its `! Name` lines (the header goes, whoever set it), then
 * its headers. A header the answer already had (the edge's Cache-Control, the app's own) is
 * replaced; one that an earlier block set gets the value appended after `, `. Set-Cookie is
 * always added as a field of its own, never joined or replacing the app's cookies.
 */

/** A flat header list (name, value, name, value...: what writeHead takes) with the blocks applied; a new list. */
export function withHeaderRules(list: readonly string[], matches: readonly HeaderMatch[]): string[] {
  const out = list.slice();
  const setByRules = new Set<string>();
  const remove = (lower: string) => {
    for (let i = out.length - 2; i >= 0; i -= 2) {
      if (out[i]!.toLowerCase() === lower) out.splice(i, 2);
    }
  };
  for (const match of matches) {
    for (const lower of match.detach) remove(lower);
    for (const [name, lower, value] of match.set) {
      if (lower === 'set-cookie') {
        out.push(name, value);
        continue;
      }
      if (setByRules.has(lower)) {
        const at = out.findIndex((field, i) => i % 2 === 0 && field.toLowerCase() === lower);
        if (at !== -1) {
          out[at + 1] = `${out[at + 1]}, ${value}`;
          continue;
        }
      }
      remove(lower);
      out.push(name, value);
      setByRules.add(lower);
    }
  }
  return out;
}

/** The same, on a header object with lower-case names (a proxied app's answer); changes it in place. */
export function applyHeaderRules(headers: OutgoingHttpHeaders, matches: readonly HeaderMatch[]): void {
  const setByRules = new Set<string>();
  for (const match of matches) {
    for (const lower of match.detach) delete headers[lower];
    for (const [, lower, value] of match.set) {
      const current = headers[lower];
      if (lower === 'set-cookie') {
        headers[lower] =
          current === undefined
            ? [value]
            : [...(Array.isArray(current) ? current : [String(current)]), value];
      } else if (setByRules.has(lower) && current !== undefined) {
        headers[lower] = `${String(current)}, ${value}`;
      } else {
        headers[lower] = value;
        setByRules.add(lower);
      }
    }
  }
}

/** A header object as a flat list, for `withHeaderRules`. */
export function headerList(headers: Readonly<Record<string, string | number>>): string[] {
  const list: string[] = [];
  for (const name in headers) list.push(name, String(headers[name]));
  return list;
}
