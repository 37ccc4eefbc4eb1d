import { describe, expect, it } from 'vitest';
import { formatCents, parseAmount } from '../../server/features/billing/money.ts';

describe('money as integer cents', () => {
  it('parses decimal strings exactly', () => {
    expect(parseAmount('25.00')).toBe(2500);
    expect(parseAmount('25')).toBe(2500);
    expect(parseAmount('25.5')).toBe(2550);
    expect(parseAmount('0.1')).toBe(10);
    // As floats, 0.29 * 100 is 28.999999999999996: the string never goes through a float.
    expect(parseAmount('0.29')).toBe(29);
    expect(parseAmount(' 1.01 ')).toBe(101);
    expect(parseAmount('999999999.99')).toBe(99_999_999_999);
  });

  it('refuses anything that is not a plain positive decimal with at most two places', () => {
    for (const bad of ['25.001', '-1', 'abc', '', '.5', '5.', '1e3', '+1', '1,00', '0x10', 'NaN', '1 000']) {
      expect(parseAmount(bad), bad).toBeNull();
    }
  });

  it('formats cents with two places and a sign', () => {
    expect(formatCents(0)).toBe('0.00');
    expect(formatCents(5)).toBe('0.05');
    expect(formatCents(2410)).toBe('24.10');
    expect(formatCents(-100)).toBe('-1.00');
    expect(formatCents(100_000_000)).toBe('1000000.00');
  });
});
