/** "15 minute", "90 second": how a time limit reads inside a sentence. */
export function describeDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} minute`;
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000} second`;
  return `${ms} millisecond`;
}

/** "612 MiB", "3.4 KiB", "12 bytes": sizes for people. */
export function describeBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  let value = bytes;
  let unit = 'bytes';
  for (const next of ['KiB', 'MiB', 'GiB', 'TiB']) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  return `${value >= 10 ? Math.round(value) : Math.round(value * 10) / 10} ${unit}`;
}

/** "1.2s", "340ms": elapsed time in a log line. */
export function describeElapsed(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`;
}
