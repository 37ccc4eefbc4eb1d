/** The longest wait we accept: a day, well past GitHub's own job limits. */
const MAX_MS = 24 * 3_600_000;

const UNITS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000 };

/**
 * A duration such as `15m`, `90s`, `1h30m` or a bare number of seconds (`600`), in milliseconds;
 * null when the text is not one, or is zero or longer than a day.
 */
export function parseDuration(text: string): number | null {
  const value = text.trim().toLowerCase();
  let ms: number;
  if (/^\d+$/.test(value)) {
    ms = Number(value) * 1000;
  } else {
    const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value);
    if (!match || value === '') return null;
    ms = ['h', 'm', 's'].reduce((sum, unit, i) => sum + Number(match[i + 1] ?? 0) * UNITS[unit]!, 0);
  }
  return ms > 0 && ms <= MAX_MS ? ms : null;
}

/** `1h 2m 3s`, `4.2s` or `850 ms`: a duration for people. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return [h ? `${h}h` : '', m ? `${m}m` : '', s ? `${s}s` : ''].filter(Boolean).join(' ');
}
