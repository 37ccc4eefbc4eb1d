import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeStatus, RuntimeSupervisor } from '../../server/features/serving/edge/runtime.ts';
import {
  parseStat,
  parseVmRss,
  readProcessGroups,
  type GroupUsage,
} from '../../server/features/monitoring/proc-stats.ts';
import { startRuntimeSampler } from '../../server/features/monitoring/runtime-sampler.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { insertDeployment, insertProject } from '../helpers/edge.ts';
import { waitFor } from '../helpers/wait-for.ts';

const hasProc = existsSync('/proc/self/stat');

describe('/proc parsing', () => {
  it('reads the process group and CPU times after a command name with spaces and parentheses', () => {
    const stat =
      '4242 (my (odd) app) S 1 4240 4240 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 1000 1000000 500';
    expect(parseStat(stat)).toEqual({ pgrp: 4240, utime: 250, stime: 75 });
    expect(parseStat('garbage')).toBeNull();
  });

  it('reads VmRSS in bytes, 0 without it', () => {
    expect(parseVmRss('Name:\tnode\nVmRSS:\t   40960 kB\nThreads: 7\n')).toBe(40960 * 1024);
    expect(parseVmRss('Name:\tkthreadd\n')).toBe(0);
  });

  it.skipIf(!hasProc)('sums a real process group: a shell and the busy node it started', async () => {
    // Like the supervisor: its own process group, a shell in front of the app.
    const child: ChildProcess = spawn(
      '/bin/sh',
      ['-c', `${process.execPath} -e "const end = Date.now() + 30000; while (Date.now() < end);" ; true`],
      { detached: true, stdio: 'ignore' },
    );
    try {
      const pgid = child.pid!;
      const first = await waitFor('both processes', async () => {
        const u = (await readProcessGroups([pgid])).get(pgid);
        return u && u.pids.length === 2 ? u : null;
      });
      // A busy loop: 10 ticks are 0.1 s of CPU, however long a loaded machine takes to give them.
      const second = await waitFor('the busy loop to use 10 ticks of CPU', async () => {
        const u = (await readProcessGroups([pgid, 999_999_999])).get(pgid)!;
        return u.cpuTicks - first.cpuTicks >= 10 ? u : null;
      });
      expect(second.pids.sort()).toEqual(first.pids.sort());
      expect(second.rssBytes).toBeGreaterThan(5 * 1024 * 1024);
      expect(second.cpuTicks - first.cpuTicks).toBeGreaterThanOrEqual(10);
      expect((await readProcessGroups([999_999_999])).size).toBe(0);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  });
});

describe('runtime sampler', () => {
  const clock = new ManualClock('2026-11-22T10:00:30.000Z');
  let t: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user();
  });
  afterAll(() => t.close());

  /** A supervisor stand-in whose apps "run" with the pids given. */
  function fakeSupervisor(pids: Map<string, number>): RuntimeSupervisor {
    return {
      start: async (id) => {
        pids.set(id, pids.get(id) ?? 100 + pids.size);
        return { port: 4000 };
      },
      stop: async (id) => void pids.delete(id),
      stopAll: async () => pids.clear(),
      portOf: () => 4000,
      status: (id): RuntimeStatus | undefined =>
        pids.has(id) ? { state: 'running', port: 4000, pid: pids.get(id), restarts: 0 } : undefined,
      openConnection: () => false,
      canConnect: () => false,
      sparePort: () => undefined,
      counts: () => ({ starting: 0, running: pids.size, restarting: 0 }),
    };
  }

  it('stores per-minute CPU and memory from successive samples, and metrics answer them', async () => {
    const p = await insertProject(t, alice.orgId);
    const d = await insertDeployment(t, p.id);
    const pids = new Map<string, number>();
    let ms = 0;
    let usage: GroupUsage = { cpuTicks: 1000, rssBytes: 50_000_000, pids: [1] };
    const sampler = startRuntimeSampler(t.deps, fakeSupervisor(pids), {
      intervalMs: 3_600_000,
      nowMs: () => ms,
      read: async (pgids) => new Map(pgids.map((pid) => [pid, usage])),
    });
    await sampler.supervisor.start(d.id, { dir: '/', command: ['x'], env: {} });

    await sampler.sample(); // baseline only
    ms += 2000;
    usage = { cpuTicks: 1100, rssBytes: 60_000_000, pids: [1] }; // 1 s of CPU in 2 s: 50%
    await sampler.sample();
    ms += 1000;
    usage = { cpuTicks: 1120, rssBytes: 40_000_000, pids: [1] }; // 0.2 s in 1 s: 20%
    await sampler.sample();
    // A restart (new pid) resets the baseline: no sample from counters of another process.
    pids.set(d.id, 999);
    ms += 1000;
    usage = { cpuTicks: 5, rssBytes: 1, pids: [999] };
    await sampler.sample();

    const rows = await t.deps.db.selectFrom('runtime_samples').selectAll().execute();
    // bigint columns come back as strings from PostgreSQL.
    expect(
      rows.map((r) => ({
        ...r,
        cpu_sum: Number(r.cpu_sum),
        ram_sum: Number(r.ram_sum),
        ram_max: Number(r.ram_max),
      })),
    ).toEqual([
      {
        project_id: p.id,
        minute: '2026-11-22T10:00:00.000Z',
        deployment_id: d.id,
        samples: 2,
        cpu_sum: 7000,
        cpu_max: 5000,
        ram_sum: 100_000_000,
        ram_max: 60_000_000,
      },
    ]);

    const res = await t.call(alice, 'GET', `/v1/projects/${p.id}/metrics?period=1h`);
    expect(res.body.data.metrics.cpu).toEqual({ avg: 35, max: 50 });
    expect(res.body.data.metrics.ram).toEqual({ avg: 50_000_000, max: 60_000_000, unit: 'bytes' });
    const cpuOnly = await t.call(alice, 'GET', `/v1/projects/${p.id}/metrics?metric=cpu`);
    expect(cpuOnly.body.data.metrics).toEqual({ cpu: { avg: 35, max: 50 } });

    // Stopped apps are no longer sampled.
    await sampler.supervisor.stop(d.id);
    ms += 1000;
    await sampler.sample();
    expect(
      (await t.deps.db.selectFrom('runtime_samples').select('samples').executeTakeFirst())!.samples,
    ).toBe(2);
    await sampler.stop();
  });

  it('leaves cpu and ram out when the period has no sample', async () => {
    const p = await insertProject(t, alice.orgId);
    const res = await t.call(alice, 'GET', `/v1/projects/${p.id}/metrics?period=1h`);
    expect(Object.keys(res.body.data.metrics).sort()).toEqual(['bandwidth', 'errors', 'latency', 'requests']);
  });
});
