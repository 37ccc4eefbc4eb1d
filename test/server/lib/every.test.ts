import { describe, expect, it } from 'vitest';
import { every } from '../../../server/core/every.ts';
import { FakeClock } from '../../helpers/clock.ts';

/** A promise the test resolves or rejects by hand. */
function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('every', () => {
  it('runs fn every ms of the clock, first after ms', async () => {
    const clock = new FakeClock();
    const at: number[] = [];
    const start = clock.now().getTime();
    const loop = every(1000, () => at.push(clock.now().getTime() - start), {
      clock,
      onError: () => undefined,
    });
    clock.advance(999);
    expect(at).toEqual([]);
    clock.advance(2001);
    expect(at).toEqual([1000, 2000, 3000]);
    await loop.stop();
    clock.advance(5000);
    expect(at).toEqual([1000, 2000, 3000]);
    expect(clock.loops).toBe(0);
  });

  it('skips the ticks that come while a run is under way, and runs again at the next one', async () => {
    const clock = new FakeClock();
    const runs: ReturnType<typeof deferred>[] = [];
    const loop = every(
      100,
      () => {
        const d = deferred();
        runs.push(d);
        return d.promise;
      },
      { clock, onError: () => undefined },
    );
    clock.advance(100);
    expect(runs).toHaveLength(1);
    clock.advance(500);
    expect(runs).toHaveLength(1);
    runs[0]!.resolve();
    await settle();
    clock.advance(100);
    expect(runs).toHaveLength(2);
    runs[1]!.resolve();
    await loop.stop();
  });

  it('stop ends the interval and waits for the run under way', async () => {
    const clock = new FakeClock();
    const d = deferred();
    let ended = false;
    const loop = every(
      100,
      async () => {
        await d.promise;
        ended = true;
      },
      { clock, onError: () => undefined },
    );
    clock.advance(100);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    d.resolve();
    await stopping;
    expect(ended).toBe(true);
    expect(clock.loops).toBe(0);
    await loop.stop();
  });

  it('reports thrown and rejected errors to the logger and goes on', async () => {
    const clock = new FakeClock();
    const warned: { obj: object; msg: string }[] = [];
    const log = { warn: (obj: object, msg: string) => warned.push({ obj, msg }) };
    let n = 0;
    const loop = every(
      10,
      () => {
        n++;
        if (n === 1) throw new Error('sync');
        if (n === 2) return Promise.reject(new Error('async'));
        return undefined;
      },
      { clock, log, name: 'the test loop' },
    );
    clock.advance(10);
    clock.advance(10);
    await settle();
    clock.advance(10);
    await loop.stop();
    expect(n).toBe(3);
    expect(warned.map((w) => w.msg)).toEqual(['the test loop failed', 'the test loop failed']);
    expect(warned.map((w) => (w.obj as { err: Error }).err.message)).toEqual(['sync', 'async']);
    expect(warned[0]!.obj).toMatchObject({ task: 'the test loop' });
  });

  it('a stop rejected by a failing run still resolves', async () => {
    const clock = new FakeClock();
    const errors: unknown[] = [];
    const d = deferred();
    const loop = every(10, () => d.promise, { clock, onError: (err) => errors.push(err) });
    clock.advance(10);
    const stopping = loop.stop();
    d.reject(new Error('late'));
    await expect(stopping).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
  });

  it('fn may stop its own interval', async () => {
    const clock = new FakeClock();
    let n = 0;
    const loop = every(
      10,
      () => {
        if (++n === 2) void loop.stop();
      },
      { clock, onError: () => undefined },
    );
    clock.advance(100);
    expect(n).toBe(2);
    await loop.stop();
  });

  it('refuses an interval Node would not keep', () => {
    const opts = { onError: () => undefined };
    expect(() => every(0, () => undefined, opts)).toThrow(RangeError);
    expect(() => every(2 ** 31, () => undefined, opts)).toThrow(RangeError);
    expect(() => every(Number.NaN, () => undefined, opts)).toThrow(RangeError);
  });

  it('on the process timers, unref by default: the timer does not hold the process', async () => {
    const timeouts = () =>
      (process as unknown as { getActiveResourcesInfo(): string[] })
        .getActiveResourcesInfo()
        .filter((h) => h === 'Timeout').length;
    let ran = 0;
    const before = timeouts();
    const loop = every(2 ** 31 - 1, () => ran++, { onError: () => undefined });
    expect(timeouts()).toBe(before);
    const kept = every(2 ** 31 - 1, () => ran++, { onError: () => undefined, unref: false });
    expect(timeouts()).toBe(before + 1);
    await kept.stop();
    expect(timeouts()).toBe(before);
    await loop.stop();
    expect(ran).toBe(0);
  });
});
