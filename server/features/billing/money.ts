/**
 * Money is integer cents from end to end: amounts are parsed from decimal strings and written
 * back as decimal strings, so no binary floating point ever touches a balance.
 */

/** The largest single top-up, in cents: keeps every entry well inside a 32-bit integer column. */
export const MAX_TOPUP_CENTS = 100_000_000;

/** `"25.00"`, `"25.5"` or `"25"` -> 2500, 2550, 2500; anything else (sign, letters, a third decimal) -> null. */
export function parseAmount(text: string): number | null {
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** 2500 -> `"25.00"`; a negative amount keeps its sign (`"-1.00"`). */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
