/** `12.3 MB`, `4.0 kB`, `17 B`. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  do {
    v /= 1000;
    u++;
  } while (v >= 1000 && u < units.length - 1);
  return `${v.toFixed(1)} ${units[u]}`;
}

/** `1 file`, `3 files`. */
export const countFiles = (n: number) => `${n} ${n === 1 ? 'file' : 'files'}`;
