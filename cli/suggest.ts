/** Edits (insert, delete, replace, swap of two neighbours) that turn `a` into `b`. */
export function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known word a typo most likely meant: the closest within a third of its length (at least
 * one edit, at most three), or one the typo begins (`dep` for `deploy`); undefined when none is.
 */
export function closest(typo: string, known: Iterable<string>): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(typo.length / 3)));
  let best: { word: string; d: number } | undefined;
  for (const word of known) {
    const d = distance(typo.toLowerCase(), word);
    if (d <= limit && (!best || d < best.d)) best = { word, d };
  }
  if (best) return best.word;
  const prefixed = [...known].filter((w) => typo.length >= 2 && w.startsWith(typo.toLowerCase()));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** ` Did you mean "x"?`, or nothing. */
export const didYouMean = (typo: string, known: Iterable<string>, show = (w: string) => w): string => {
  const word = closest(typo, known);
  return word === undefined ? '' : ` Did you mean ${show(word)}?`;
};
