import { describe, expect, it } from 'vitest';
import { createSemaphore } from '../../../server/features/builds/concurrency.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('createSemaphore', () => {
  it('runs at most `limit` tasks at once, in arrival order', async () => {
    const sem = createSemaphore(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const task = (n: number) =>
      sem.run(async () => {
        running++;
        peak = Math.max(peak, running);
        order.push(n);
        await tick();
        running--;
        return n * 10;
      });
    const results = await Promise.all([1, 2, 3, 4, 5].map(task));
    expect(results).toEqual([10, 20, 30, 40, 50]);
    expect(peak).toBe(2);
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect(sem.active).toBe(0);
  });

  it('frees the slot when the task throws, and a release twice counts once', async () => {
    const sem = createSemaphore(1);
    await expect(sem.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const release = await sem.acquire();
    expect(sem.active).toBe(1);
    release();
    release();
    expect(sem.active).toBe(0);
  });

  it('drops a waiter whose signal aborts', async () => {
    const sem = createSemaphore(1);
    const release = await sem.acquire();
    const controller = new AbortController();
    const waiting = sem.acquire(controller.signal);
    expect(sem.waiting).toBe(1);
    controller.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
    expect(sem.waiting).toBe(0);
    release();
    expect(sem.active).toBe(0);
  });

  it('rejects a limit that is not a positive whole number', () => {
    expect(() => createSemaphore(0)).toThrow(/positive whole number/);
  });
});
