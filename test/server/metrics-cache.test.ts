import { describe, expect, it } from 'vitest';
import {
  createMetricsCache,
  METRICS_CACHE_ENTRIES,
  METRICS_FRESH_MS,
} from '../../server/platform/deps/metrics-cache.ts';

/** A computation that resolves when told, counting how often it ran. */
const computation = (value: object) => {
  let runs = 0;
  let finish = () => {};
  const compute = () => {
    runs += 1;
    return new Promise<object>((resolve) => {
      finish = () => resolve(value);
    });
  };
  return { compute, runs: () => runs, finish: () => finish() };
};

describe('metrics cache', () => {
  it('reuses an answer for METRICS_FRESH_MS, and shares one computation between concurrent callers', async () => {
    let now = 10_000;
    const cache = createMetricsCache(() => now);
    const c = computation({ total: 1 });
    const [a, b] = [cache.get('q', c.compute), cache.get('q', c.compute)];
    c.finish();
    expect(await a).toEqual({ total: 1 });
    expect(await b).toBe(await a);
    expect(c.runs()).toBe(1);
    now += METRICS_FRESH_MS - 1;
    expect(await cache.get('q', async () => ({ total: 2 }))).toEqual({ total: 1 });
    now += 2;
    expect(await cache.get('q', async () => ({ total: 2 }))).toEqual({ total: 2 });
  });

  it('does not keep an answer whose computation was under way when the rollups changed', async () => {
    const cache = createMetricsCache(() => 10_000);
    const c = computation({ total: 1 });
    const before = cache.get('q', c.compute);
    cache.rollupsChanged();
    c.finish();
    // Its caller still gets it; the next one computes again.
    expect(await before).toEqual({ total: 1 });
    expect(await cache.get('q', async () => ({ total: 2 }))).toEqual({ total: 2 });
  });

  it('forgets the least recently used answer past its bound, keeping the rest', async () => {
    const cache = createMetricsCache(() => 10_000);
    for (let i = 0; i < METRICS_CACHE_ENTRIES; i++) await cache.get(`q${i}`, async () => ({ i }));
    // q0 becomes the most recently used; q1 is then the least.
    expect(await cache.get('q0', async () => ({ i: -1 }))).toEqual({ i: 0 });
    await cache.get('one more', async () => ({ i: 'new' }));
    expect(await cache.get('q0', async () => ({ i: -1 }))).toEqual({ i: 0 });
    expect(await cache.get('q2', async () => ({ i: -1 }))).toEqual({ i: 2 });
    expect(await cache.get('one more', async () => ({ i: -1 }))).toEqual({ i: 'new' });
    expect(await cache.get('q1', async () => ({ i: 'again' }))).toEqual({ i: 'again' });
  });
});
