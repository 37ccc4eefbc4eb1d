import { afterAll, describe, expect, it } from 'vitest';
import { startInactiveAppStopper } from '../../../server/features/serving/edge/stop-inactive-apps.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { FakeClock } from '../../helpers/clock.ts';
import { insertProject } from '../../helpers/edge.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
});

describe('the inactive app stopper', () => {
  it('stops the apps of a suspended project at its next tick, with no signal, on the fake clock', async () => {
    const t = await createTestApp();
    apps.push(t);
    const u = await t.user();
    const active = await insertProject(t, u.orgId, { name: 'still-on' });
    const suspended = await insertProject(t, u.orgId, { name: 'paused', status: 'suspended' });
    const stopped: string[] = [];
    let checks = 0;
    const launcher = {
      projects: () => (checks++, [active.id, suspended.id]),
      stopProject: async (id: string) => void stopped.push(id),
    };
    const clock = new FakeClock();
    const stopper = startInactiveAppStopper(t.deps, launcher, { clock, intervalMs: 1000 });
    try {
      clock.advance(999);
      await new Promise((resolve) => setImmediate(resolve));
      expect(checks).toBe(0);
      clock.advance(1);
      await waitFor('the tick to stop the suspended project', () => stopped.length === 1);
      expect(stopped).toEqual([suspended.id]);
      expect(checks).toBe(1);
    } finally {
      await stopper.stop();
    }
    expect(clock.loops).toBe(0);
  });
});
