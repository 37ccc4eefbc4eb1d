import type { Clock } from '../../server/lib/clock.ts';

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
