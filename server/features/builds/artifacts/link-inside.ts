/**
 * The target of a link at `sitePath` when it stays inside the artifact, else null. It must be
 * relative, climb (`..`) only at its start, through the real folders above the link (the walk
 * never enters a link), and not above the root: a `..` after a name could climb out of wherever
 * a link of that name points (`d -> .` then `d/d/..`).
 */
export function linkInside(sitePath: string, target: string): string | null {
  if (target.startsWith('/') || target.includes('\\') || target.includes('\0')) return null;
  let depth = sitePath.split('/').length - 2;
  let descended = false;
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') descended = true;
    else if (descended || --depth < 0) return null;
  }
  return target;
}
