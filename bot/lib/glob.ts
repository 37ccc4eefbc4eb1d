/**
 * Matches repository paths against the glob patterns of `previews.paths`: `**` spans
 * directories, `*` and `?` stay within one path segment, `{a,b}` is either, a pattern without a
 * slash matches the file name in any directory and a leading `/` anchors it at the root (as in
 * .gitignore).
 */
export function globToRegExp(pattern: string): RegExp {
  const anchored = pattern.startsWith('/');
  let p = anchored ? pattern.slice(1) : pattern;
  if (!anchored && !p.includes('/')) p = `**/${p}`;
  if (p.endsWith('/')) p = `${p}**`;
  let out = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '*') {
      if (p[i + 1] === '*') {
        const slash = p[i + 2] === '/';
        // `**/` matches zero or more whole directories; a trailing `**` matches anything.
        out += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '{') {
      const end = p.indexOf('}', i);
      if (end === -1) {
        out += '\\{';
      } else {
        const options = p
          .slice(i + 1, end)
          .split(',')
          .map(escape);
        out += `(?:${options.join('|')})`;
        i = end;
      }
    } else {
      out += escape(c);
    }
  }
  return new RegExp(`^${out}$`);
}

const escape = (s: string) => s.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');

/**
 * True when `path` is selected by the patterns: later patterns win, `!` excludes, and a list of
 * only exclusions selects everything else.
 */
export function matchesAny(path: string, patterns: readonly string[]): boolean {
  let selected = patterns.every((p) => p.startsWith('!'));
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    if (globToRegExp(negated ? pattern.slice(1) : pattern).test(path)) selected = !negated;
  }
  return selected;
}
