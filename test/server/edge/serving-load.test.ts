import { describe, expect, it } from 'vitest';
import type { PlanName } from '../../../server/core/plan-limits.ts';
import { createServingLoad } from '../../../server/features/serving/edge/serving-load.ts';
import { FakeClock } from '../../helpers/clock.ts';

const tick = async (clock: FakeClock, ms = 250) => {
  clock.advance(ms);
  // The plan look-ups answer in a later microtask.
  await new Promise((r) => setImmediate(r));
};

describe('the edge’s load by plan', () => {
  it('shares the process’s CPU out among the plans by requests, looking each project’s plan up once', async () => {
    const clock = new FakeClock();
    let cpuUs = 0;
    const lookups: string[] = [];
    const plans: Record<string, PlanName> = { ent: 'enterprise', free1: 'free', free2: 'free' };
    const reports: Map<PlanName, number>[] = [];
    const load = createServingLoad({
      lookUpPlan: async (id) => {
        lookups.push(id);
        return plans[id]!;
      },
      served: (m) => void reports.push(new Map(m)),
      cpuUsageUs: () => cpuUs,
      clock,
    });

    // Nothing served: nothing said.
    await tick(clock);
    expect(reports).toEqual([]);

    // The first tick with requests looks the plans up: not yet counted.
    load.record('ent');
    load.record(null);
    cpuUs += 100_000;
    await tick(clock);
    expect(lookups).toEqual(['ent']);
    expect(reports.at(-1)).toEqual(new Map());

    // 3 enterprise requests and 1 free one in 250 ms of which the process ran 200 ms: 0.6 and 0.2 CPU.
    for (const id of ['ent', 'ent', 'ent', 'free1']) load.record(id);
    cpuUs += 200_000;
    await tick(clock);
    expect(lookups).toEqual(['ent', 'free1']);
    const last = reports.at(-1)!;
    expect(last.get('enterprise')).toBeCloseTo(0.6);
    expect(last.has('free')).toBe(false);
    for (const id of ['ent', 'free1', 'free1', 'free1']) load.record(id);
    cpuUs += 100_000;
    await tick(clock);
    expect(reports.at(-1)!.get('enterprise')).toBeCloseTo(0.1);
    expect(reports.at(-1)!.get('free')).toBeCloseTo(0.3);

    // Idle again: one empty report takes it back, then silence; no look-up was repeated.
    await tick(clock);
    const count = reports.length;
    expect(reports.at(-1)).toEqual(new Map());
    await tick(clock);
    expect(reports.length).toBe(count);
    expect(lookups).toEqual(['ent', 'free1']);

    // A plan is looked up again once a minute (an upgrade shows), the old one counted meanwhile.
    plans.ent = 'pro';
    await tick(clock, 60_000);
    load.record('ent');
    cpuUs += 50_000;
    await tick(clock);
    expect(reports.at(-1)!.get('enterprise')).toBeCloseTo(0.2);
    load.record('ent');
    cpuUs += 50_000;
    await tick(clock);
    expect(reports.at(-1)!.get('pro')).toBeCloseTo(0.2);
    expect(lookups.filter((id) => id === 'ent')).toHaveLength(2);

    // Stopped: it takes back what it said and ticks no more.
    await load.stop();
    expect(reports.at(-1)).toEqual(new Map());
    expect(clock.loops).toBe(0);
  });

  it('counts nothing for a project whose look-up fails, and tries again at its next requests', async () => {
    const clock = new FakeClock();
    let fail = true;
    const reports: Map<PlanName, number>[] = [];
    let cpuUs = 0;
    const load = createServingLoad({
      lookUpPlan: async () => {
        if (fail) throw new Error('database unavailable');
        return 'pro';
      },
      served: (m) => void reports.push(new Map(m)),
      cpuUsageUs: () => cpuUs,
      clock,
    });
    load.record('p');
    cpuUs += 100_000;
    await tick(clock);
    load.record('p');
    cpuUs += 100_000;
    await tick(clock);
    expect(reports.every((r) => r.size === 0)).toBe(true);
    fail = false;
    load.record('p');
    await tick(clock);
    load.record('p');
    cpuUs += 100_000;
    await tick(clock);
    expect(reports.at(-1)!.get('pro')).toBeCloseTo(0.4);
    await load.stop();
  });
});
