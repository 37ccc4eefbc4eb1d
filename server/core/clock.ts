/** Time is injected so tests can move it. */
export interface Clock {
  now(): Date;
  /**
   * Calls `tick` every `ms` of this clock's time until the returned function is called. Optional:
   * `every` (core/every.ts) uses the process's timers when a clock has none; a fake clock in tests
   * has one, so moving it runs the loops that were given it.
   */
  repeat?(ms: number, tick: () => void): () => void;
}

export const systemClock: Clock = { now: () => new Date() };

export const iso = (d: Date): string => d.toISOString();
