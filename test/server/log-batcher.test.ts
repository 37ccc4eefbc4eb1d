import { describe, expect, it } from 'vitest';
import {
  createLogBatcher,
  type LogEntry,
  type Timers,
} from '../../server/features/builds/job/log-batcher.ts';

/** Timers that run only when the test moves time. */
function manualTimers() {
  let now = 0;
  let seq = 0;
  const due = new Map<number, { at: number; fn: () => void }>();
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  const timers: Timers = {
    setTimeout(fn, ms) {
      const id = ++seq;
      due.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout(handle) {
      due.delete(handle as number);
    },
  };
  return {
    timers,
    settle,
    /** Moves time on by `ms`, running each timer that comes due (and what it sets off) in order. */
    async advance(ms: number) {
      const until = now + ms;
      await settle();
      for (;;) {
        const next = [...due.entries()].sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (!next || next[1].at > until) break;
        due.delete(next[0]);
        now = next[1].at;
        next[1].fn();
        await settle();
      }
      now = until;
    },
    pending: () => due.size,
  };
}

const entry = (i: number): LogEntry => ({ type: 'build', line: `line ${i}` });

/** A store that records every batch; `hold` makes writes wait until released. */
function recordingStore() {
  const batches: LogEntry[][] = [];
  let holding: (() => void)[] | null = null;
  return {
    batches,
    lines: () => batches.flat().map((e) => e.line),
    hold() {
      holding = [];
    },
    release() {
      const held = holding ?? [];
      holding = null;
      for (const r of held) r();
    },
    write: async (batch: readonly LogEntry[]) => {
      if (holding) await new Promise<void>((r) => holding!.push(r));
      batches.push([...batch]);
    },
  };
}

describe('log batcher', () => {
  it('writes a batch when it is full or its first line has waited maxWaitMs, lines in order', async () => {
    const t = manualTimers();
    const store = recordingStore();
    const b = createLogBatcher({
      write: store.write,
      onError: (err) => {
        throw err;
      },
      maxLines: 3,
      maxBytes: 1 << 20,
      maxWaitMs: 250,
      gapMs: 10,
      timers: t.timers,
    });
    b.add(entry(1), 1);
    b.add(entry(2), 1);
    await t.advance(249);
    expect(store.batches).toEqual([]);
    await t.advance(1);
    expect(store.lines()).toEqual(['line 1', 'line 2']);

    // A full batch goes without its timer, once the write before has rested gapMs.
    for (let i = 3; i <= 5; i++) b.add(entry(i), 1);
    await t.advance(9);
    expect(store.batches).toHaveLength(1);
    await t.advance(1);
    expect(store.batches.at(-1)!.map((e) => e.line)).toEqual(['line 3', 'line 4', 'line 5']);

    // By bytes too.
    const byBytes = createLogBatcher({
      write: store.write,
      onError: () => {},
      maxLines: 1000,
      maxBytes: 100,
      timers: t.timers,
    });
    byBytes.add(entry(6), 60);
    await t.settle();
    expect(store.batches).toHaveLength(2);
    byBytes.add(entry(7), 60);
    await t.settle();
    expect(store.batches.at(-1)!.map((e) => e.line)).toEqual(['line 6', 'line 7']);
  });

  it('rests gapMs between writes on a timer, and the producer waits on ready() meanwhile', async () => {
    const t = manualTimers();
    const store = recordingStore();
    const b = createLogBatcher({
      write: store.write,
      onError: () => {},
      maxLines: 10,
      maxWaitMs: 250,
      gapMs: 10,
      timers: t.timers,
    });
    let next = 0;
    let waits = 0;
    // A producer like the pipe: adds lines until ready() asks it to wait.
    const produce = async (total: number) => {
      while (next < total) {
        b.add(entry(next++), 10);
        const wait = b.ready();
        if (wait) {
          waits++;
          await wait;
        }
      }
    };
    const producing = produce(100);
    await t.settle();
    // First batch written at once; the next one filled, and the producer waits for the rest.
    expect(store.batches).toHaveLength(1);
    expect(next).toBe(20);
    await t.advance(9);
    expect(store.batches).toHaveLength(1);
    await t.advance(1);
    expect(store.batches).toHaveLength(2);
    await t.advance(10 * 10);
    await producing;
    await b.flush();
    expect(store.lines()).toEqual(Array.from({ length: 100 }, (_, i) => `line ${i}`));
    expect(store.batches.every((batch) => batch.length <= 10)).toBe(true);
    expect(waits).toBeGreaterThanOrEqual(8);
  });

  it('flush writes what is queued now, after a write in progress, keeping the order', async () => {
    const t = manualTimers();
    const store = recordingStore();
    const b = createLogBatcher({ write: store.write, onError: () => {}, maxLines: 2, timers: t.timers });
    store.hold();
    b.add(entry(1), 1);
    b.add(entry(2), 1); // full: being written (held)
    b.add(entry(3), 1);
    const flushed = b.flush();
    await t.settle();
    expect(store.batches).toEqual([]);
    store.release();
    await t.advance(10);
    await flushed;
    expect(store.lines()).toEqual(['line 1', 'line 2', 'line 3']);
  });

  it('a crash mid-batch loses at most the batch being written and the one filling', async () => {
    const t = manualTimers();
    const store = recordingStore();
    const b = createLogBatcher({
      write: store.write,
      onError: () => {},
      maxLines: 50,
      gapMs: 10,
      timers: t.timers,
    });
    let next = 0;
    const produce = async () => {
      for (;;) {
        b.add(entry(next++), 10);
        const wait = b.ready();
        if (wait) await wait;
      }
    };
    void produce();
    await t.advance(35);
    // The "crash": the write of the next batch never completes, and nothing runs after it.
    store.hold();
    await t.advance(100);
    const stored = store.lines();
    expect(stored.length).toBeGreaterThan(0);
    expect(stored).toEqual(Array.from({ length: stored.length }, (_, i) => `line ${i}`));
    // The producer made `next` lines; all but the last two batches' worth are stored.
    expect(next - stored.length).toBeLessThanOrEqual(2 * 50 + 1);
    expect(next - stored.length).toBeGreaterThan(0);
  });

  it('a failed write is reported and later batches still go', async () => {
    const t = manualTimers();
    const errors: unknown[] = [];
    let fail = true;
    const written: string[] = [];
    const b = createLogBatcher({
      write: async (batch) => {
        if (fail) {
          fail = false;
          throw new Error('disk full');
        }
        written.push(...batch.map((e) => e.line));
      },
      onError: (err) => errors.push(err),
      maxLines: 2,
      timers: t.timers,
    });
    for (let i = 0; i < 4; i++) b.add(entry(i), 1);
    await t.advance(20);
    await b.flush();
    expect(errors).toHaveLength(1);
    expect(written).toEqual(['line 2', 'line 3']);
  });

  it('writes lines queued past a full batch in statements of maxLines rows, in order', async () => {
    const t = manualTimers();
    const store = recordingStore();
    const b = createLogBatcher({ write: store.write, onError: () => {}, maxLines: 100, timers: t.timers });
    store.hold();
    // A producer that does not wait (the end of a flood written at once) while a write is busy.
    for (let i = 0; i < 1050; i++) b.add(entry(i), 1);
    store.release();
    let flushed = false;
    void b.flush().then(() => (flushed = true));
    // Statements after the first go on their own turns of the event loop (setImmediate).
    while (!flushed) {
      await t.advance(10);
      await new Promise((r) => setImmediate(r));
    }
    expect(store.lines()).toEqual(Array.from({ length: 1050 }, (_, i) => `line ${i}`));
    expect(Math.max(...store.batches.map((batch) => batch.length))).toBe(100);
  });
});
