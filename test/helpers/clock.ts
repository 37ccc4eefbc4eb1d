import type { Clock } from '../../server/core/clock.ts';

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  private t: number;
  constructor(start = '2026-11-22T10:00:00.000Z') {
    this.t = Date.parse(start);
  }
  now() {
    return new Date(this.t);
  }
  advance(ms: number) {
    this.t += ms;
  }
  set(iso: string) {
    this.t = Date.parse(iso);
  }
}

/**
 * A manual clock that also drives the loops given it (`every`, lib/every.ts): `advance` moves
 * the time in steps, running each due tick at its own time, in order. Nothing waits on real time.
 */
export class FakeClock extends ManualClock {
  private timers = new Set<{ ms: number; due: number; tick: () => void }>();

  repeat(ms: number, tick: () => void) {
    const timer = { ms, due: this.now().getTime() + ms, tick };
    this.timers.add(timer);
    return () => void this.timers.delete(timer);
  }

  /** How many loops run on this clock. */
  get loops() {
    return this.timers.size;
  }

  override advance(ms: number) {
    const end = this.now().getTime() + ms;
    for (;;) {
      let next: { ms: number; due: number; tick: () => void } | undefined;
      for (const t of this.timers) if (t.due <= end && (!next || t.due < next.due)) next = t;
      if (!next) break;
      super.set(new Date(next.due).toISOString());
      next.due += next.ms;
      next.tick();
    }
    super.set(new Date(end).toISOString());
  }

  /** Moves the time by `ms` and then lets the runs it started go on (promise callbacks, I/O). */
  async advanceAndSettle(ms: number) {
    this.advance(ms);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
