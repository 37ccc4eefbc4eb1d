import picomatch from 'picomatch';

/**
 * Matches repository paths against the glob patterns of `previews.paths`, with the syntax of
 * GitHub's `paths:` filters (picomatch): `**` spans directories, `*` and `?` stay within one path
 * segment, `{a,b}` and `{src/**,docs/*}` are alternatives, `[0-9]` a character class. As in
 * .gitignore, a pattern without a slash matches the file name in any directory, a leading `/`
 * anchors it at the root, and a trailing `/` means everything below.
 */
export function globMatcher(pattern: string): (path: string) => boolean {
  const anchored = pattern.startsWith('/');
  let p = anchored ? pattern.slice(1) : pattern;
  if (p.endsWith('/')) p = `${p}**`;
  // A slash inside braces (`{src/**,docs/*}`) is a path too: only a bare name matches anywhere.
  const bareName = !anchored && !p.includes('/');
  return picomatch(p, { dot: true, basename: bareName });
}

/**
 * True when `path` is selected by the patterns: later patterns win, `!` excludes, and a list of
 * only exclusions selects everything else.
 */
export function matchesAny(path: string, patterns: readonly string[]): boolean {
  let selected = patterns.every((p) => p.startsWith('!'));
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    if (globMatcher(negated ? pattern.slice(1) : pattern)(path)) selected = !negated;
  }
  return selected;
}
