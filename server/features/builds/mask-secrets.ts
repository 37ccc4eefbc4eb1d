/**
 * Returns a function that replaces every occurrence of a secret value in a line with `***`.
 * A multi-line secret (a PEM key) is masked line by line, because logs arrive one line at a time.
 */
export function createMasker(secrets: readonly string[]): (line: string) => string {
  const pieces = [
    ...new Set(secrets.flatMap((s) => s.split(/\r?\n/)).filter((piece) => piece.trim().length > 0)),
  ];
  // Longest first, so a secret that contains a shorter one is masked whole.
  pieces.sort((a, b) => b.length - a.length);
  if (pieces.length === 0) return (line) => line;
  return (line) => {
    let out = line;
    for (const piece of pieces) if (out.includes(piece)) out = out.split(piece).join('***');
    return out;
  };
}
