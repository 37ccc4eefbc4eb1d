import { mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCpuPools, v1PoolFiles, type PoolFiles } from '../../../server/platform/sandbox/cpu-pools.ts';
import { FakeClock } from '../../helpers/clock.ts';

/**
 * A pools' files in memory: each plan's CPU time used so far, every cap written, in order, and the
 * serving markers with the time they were last touched (by `clock`).
 */
function memoryFiles(readable = true, clock?: FakeClock) {
  const usage = new Map<string, number>();
  const writes: [string, number | null][] = [];
  const groups = new Map<string, number>();
  const markers = new Map<string, number>();
  const files: PoolFiles = {
    dir: (pool) => `/pools/${pool}`,
    ensure: (pool) => void usage.set(pool, usage.get(pool) ?? 0),
    usageUs: (pool) => (readable ? (usage.get(pool) ?? null) : null),
    hasGroups: (pool) => (groups.get(pool) ?? 0) > 0,
    writeCap: (pool, cpus) => void writes.push([pool, cpus]),
    mark: (pool, name) => void markers.set(`${pool}/${name}`, clock!.now().getTime()),
    unmark: (pool, name) => void markers.delete(`${pool}/${name}`),
    lastMarked(pool) {
      const times = [...markers].filter(([k]) => k.startsWith(`${pool}/`)).map(([, t]) => t);
      return times.length ? Math.max(...times) : null;
    },
  };
  /** `pool` uses `cpus` CPUs for `ms` (its counter moves as the kernel's would). */
  const use = (pool: string, cpus: number, ms: number) =>
    usage.set(pool, (usage.get(pool) ?? 0) + cpus * ms * 1000);
  return { files, writes, use, groups, markers };
}

describe('the plans’ CPU pools', () => {
  it('cap the free plan at its cpu-cap while an enterprise sandbox is busy, and lift it 2 s after', () => {
    const clock = new FakeClock();
    const { files, writes, use } = memoryFiles();
    const pools = createCpuPools(files, { machineCpus: 4, clock });

    expect(pools.joined({ plan: 'free', cpuCap: 0.25 })).toBe('/pools/free');
    // Nothing higher is busy: the free plan has every CPU.
    expect(writes).toEqual([['free', null]]);

    // An enterprise sandbox starts: the cap is in place before its first process runs.
    pools.joined({ plan: 'enterprise', cpuCap: null });
    expect(writes.at(-1)).toEqual(['free', 1]);
    expect(pools.capped.get('free')).toBe(1);

    // While it keeps a fifth of a CPU busy, the cap stays.
    for (let i = 0; i < 20; i++) {
      use('enterprise', 0.2, 250);
      clock.advance(250);
    }
    expect(pools.capped.get('free')).toBe(1);
    expect(writes.filter(([p]) => p === 'free')).toHaveLength(2);

    // It ends (or idles, as a server app between requests): the cap goes 2 s later, not before.
    pools.left();
    clock.advance(1500);
    expect(pools.capped.get('free')).toBe(1);
    clock.advance(1000);
    expect(pools.capped.has('free')).toBe(false);
    expect(writes.at(-1)).toEqual(['free', null]);
  });

  it('leave a plan alone beside its own plan’s and lower plans’ sandboxes, and an idle higher one', () => {
    const clock = new FakeClock();
    const { files, writes, use } = memoryFiles();
    const pools = createCpuPools(files, { machineCpus: 2, clock });
    pools.joined({ plan: 'pro', cpuCap: 0.5 });
    pools.joined({ plan: 'pro', cpuCap: 0.5 });
    pools.joined({ plan: 'free', cpuCap: 0.25 });
    // The free sandbox was made while pro was busy: it starts capped, at a quarter of 2 CPUs.
    expect(pools.capped.get('free')).toBe(0.5);
    expect(pools.capped.has('pro')).toBe(false);
    for (let i = 0; i < 12; i++) {
      use('free', 2, 250);
      use('pro', 1, 250);
      clock.advance(250);
    }
    // Pro is busy: free stays capped; nothing above pro is busy: pro never is.
    expect(pools.capped.get('free')).toBe(0.5);
    expect(writes.filter(([p]) => p === 'pro').every(([, cpus]) => cpus === null)).toBe(true);
    // Pro goes idle (1% of a CPU: a server app waiting for requests): free gets every CPU back.
    for (let i = 0; i < 12; i++) {
      use('pro', 0.01, 250);
      clock.advance(250);
    }
    expect(pools.capped.has('free')).toBe(false);
  });

  it('count a higher plan busy while it has groups, where its CPU use cannot be read (v1 without cpuacct)', () => {
    const clock = new FakeClock();
    const { files, groups } = memoryFiles(false);
    const pools = createCpuPools(files, { machineCpus: 2, clock });
    pools.joined({ plan: 'free', cpuCap: 0.1 });
    pools.joined({ plan: 'enterprise', cpuCap: null });
    groups.set('enterprise', 1);
    clock.advance(10_000);
    expect(pools.capped.get('free')).toBeCloseTo(0.2);
    groups.set('enterprise', 0);
    pools.left();
    clock.advance(2500);
    expect(pools.capped.has('free')).toBe(false);
  });

  it('watch only while this process has groups', () => {
    const clock = new FakeClock();
    const pools = createCpuPools(memoryFiles().files, { machineCpus: 2, clock });
    expect(clock.loops).toBe(0);
    pools.joined(null);
    pools.joined({ plan: 'free', cpuCap: 0.25 });
    expect(clock.loops).toBe(1);
    pools.left();
    expect(clock.loops).toBe(1);
    pools.left();
    expect(clock.loops).toBe(0);
  });

  it('count a plan busy while another process’s edge says it serves the plan’s sites, until it stops saying so', () => {
    const clock = new FakeClock();
    const { files, markers } = memoryFiles(true, clock);
    // Two processes on one machine: a builder with a free build, an edge serving an enterprise site.
    const builder = createCpuPools(files, { machineCpus: 2, clock });
    const edge = createCpuPools(files, { machineCpus: 2, clock });
    builder.joined({ plan: 'free', cpuCap: 0.1 });
    expect(builder.capped.has('free')).toBe(false);

    // 2% of a CPU on the enterprise site: not busy, no marker.
    edge.served(new Map([['enterprise', 0.02]]));
    clock.advance(500);
    expect(markers.size).toBe(0);
    expect(builder.capped.has('free')).toBe(false);

    // A third of a CPU, told every tick: the builder caps the free plan, and keeps it capped.
    for (let i = 0; i < 12; i++) {
      edge.served(
        new Map([
          ['enterprise', 0.3],
          ['free', 0.3],
        ]),
      );
      clock.advance(250);
    }
    expect([...markers.keys()]).toEqual([`enterprise/serving-${process.pid}`]);
    expect(builder.capped.get('free')).toBeCloseTo(0.2);

    // The edge stops saying so (an empty report: its traffic ended): the cap goes 2 s later.
    edge.served(new Map());
    expect(markers.size).toBe(0);
    clock.advance(1500);
    expect(builder.capped.get('free')).toBeCloseTo(0.2);
    clock.advance(1000);
    expect(builder.capped.has('free')).toBe(false);
  });

  it('read a marker’s age from its directory, and never count markers as groups (real directories)', () => {
    const root = mkdtempSync(join(tmpdir(), 'pools-'));
    try {
      const files = v1PoolFiles(root, null);
      files.ensure('pro');
      expect(files.lastMarked('pro')).toBeNull();
      files.mark('pro', 'serving-123');
      const first = files.lastMarked('pro')!;
      expect(Math.abs(first - Date.now())).toBeLessThan(5000);
      expect(files.hasGroups('pro')).toBe(false);
      // Touched again: the newer time; an old marker of another process does not hide it.
      mkdirSync(join(root, 'pro', 'serving-456'));
      utimesSync(join(root, 'pro', 'serving-456'), new Date(0), new Date(0));
      utimesSync(join(root, 'pro', 'serving-123'), new Date(0), new Date(0));
      files.mark('pro', 'serving-123');
      expect(files.lastMarked('pro')).toBeGreaterThanOrEqual(first);
      mkdirSync(join(root, 'pro', '77-1'));
      expect(files.hasGroups('pro')).toBe(true);
      files.unmark('pro', 'serving-123');
      files.unmark('pro', 'serving-456');
      expect(files.lastMarked('pro')).toBeNull();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
