import { readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { every } from '../../core/every.ts';
import type { GroupEnd } from './cgroup-types.ts';

// What the v1 and v2 groups (cgroup-v1.ts, cgroup-v2.ts) share: reading their files, watching
// their limit counters, emptying and removing them.

/**
 * A sandbox that hits its process limit (as many processes as it may have, or a fork refused) or
 * its memory limit (a process killed)
 * runs at this part of its CPU share from then on: a fork flood or a memory hog spends the
 * machine's time in the kernel (forks, reclaim) that other tenants then wait for. Legitimate
 * builds rarely hit either, and those that do still run: the share only counts under contention.
 */
export const LIMIT_HIT_CPU_SHARE = 1 / 16;
/**
 * A group holding this many processes counts as at its process limit: inside the sandbox the
 * same limit as RLIMIT_NPROC refuses forks before the group does (the group also holds the
 * sandbox's own helpers), and a flood stays just under it.
 */
export const nearProcessLimit = (limit: number) => Math.max(1, Math.floor(limit * 0.9));
/** How often a group's limit counters are read (three small files). */
const LIMIT_WATCH_MS = 250;

/**
 * Watches a group's limit counters and calls `lower` (which writes the group's lowered CPU share)
 * once one has moved. `counters` is null once the group is gone: the watch ends then too.
 */
export function limitWatch(
  counters: () => { forks: number; atProcessLimit: boolean; oomKills: number } | null,
  lower: () => void,
) {
  let lowered: GroupEnd['cpuLowered'] = null;
  const check = () => {
    if (lowered) return;
    const c = counters();
    if (!c) return void timer.stop();
    lowered = c.forks > 0 || c.atProcessLimit ? 'processes' : c.oomKills > 0 ? 'memory' : null;
    if (!lowered) return;
    void timer.stop();
    try {
      lower();
    } catch {
      // The group is being removed.
    }
  };
  // The counters' reads catch their own errors (a group removed meanwhile reads as gone).
  const timer = every(LIMIT_WATCH_MS, check, { onError: () => undefined });
  return {
    get lowered() {
      return lowered;
    },
    /** Reads the counters a last time (a flood in its last quarter second counts too) and stops. */
    stop() {
      check();
      void timer.stop();
    },
  };
}

/** How long release() waits for a group's processes to end after killing them. */
const RELEASE_TIMEOUT_MS = 30_000;

export const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** A `key value` line of a cgroup file (memory.events, memory.oom_control), or null. */
export function field(text: string | null, key: string): number | null {
  const m = text ? new RegExp(`^${key} (\\d+)$`, 'm').exec(text) : null;
  return m ? Number(m[1]) : null;
}

export const errno = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/** A group's name: this process's pid first, so that another start can tell a crashed service's. */
let made = 0;
export const nextName = () => `${process.pid}-${++made}`;

export function tasks(dir: string): number[] {
  return (read(join(dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number);
}

export function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Kills what is left in `dirs` until they are empty, then removes them after `read` has looked at
 * them. cgroup v1 has no cgroup.kill: the pids read from cgroup.procs are killed one by one, at
 * once (another process could only have the pid if the pid space wrapped around in between).
 */
export async function empty(dirs: string[], killAll: () => void): Promise<boolean> {
  const deadline = Date.now() + RELEASE_TIMEOUT_MS;
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    const left = dirs.flatMap(tasks);
    if (left.length === 0) return true;
    if (Date.now() > deadline) return false;
    killAll();
    for (const pid of left) kill(pid);
    await sleep(wait);
  }
}

export function removeAll(dirs: string[]): boolean {
  let removed = true;
  for (const dir of dirs) {
    try {
      rmdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') removed = false;
    }
  }
  return removed;
}

export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

/**
 * Moves every process of group directory `from` into `to`, in the same hierarchy (a spare
 * sandbox's group joining its plan's pool), until none is left or a few rounds have passed (a
 * process forked meanwhile is moved in the next).
 */
export function moveProcesses(from: string, to: string): void {
  for (let round = 0; round < 10; round++) {
    const left = tasks(from);
    if (left.length === 0) return;
    for (const pid of left) {
      try {
        writeFileSync(join(to, 'cgroup.procs'), String(pid));
      } catch {
        // Gone meanwhile.
      }
    }
  }
}

/**
 * A moved group's old directories (`from`) and where their processes belong now (`to`). The old
 * ones stay until the group is released: a spare's first process joins the paths it was given
 * when it was spawned, which may be after the move (a spare taken at once). What arrives there
 * is moved on now and every LIMIT_WATCH_MS until stop().
 */
export function sweepMoved(pairs: readonly (readonly [from: string, to: string])[]): { stop(): void } {
  const sweep = () => {
    for (const [from, to] of pairs) moveProcesses(from, to);
  };
  sweep();
  const timer = every(LIMIT_WATCH_MS, sweep, { onError: () => undefined });
  return { stop: () => void timer.stop() };
}

/**
 * How a group ended, read once it is empty (before its directories are removed) and its limit
 * watch stopped: its counters, whether the watch lowered it, and the peak its memory controller
 * kept in `peakFile`.
 */
export function endOf(
  watch: ReturnType<typeof limitWatch> | undefined,
  counters: { forks: number; oomKills: number } | null,
  memoryBytes: number,
  peakFile: string,
): Omit<GroupEnd, 'removed'> {
  const c = counters ?? { forks: 0, oomKills: 0 };
  const peak = Number(read(peakFile));
  return {
    oomKills: c.oomKills,
    memoryBytes,
    peakBytes: Number.isFinite(peak) && peak > 0 ? peak : null,
    forksRefused: c.forks,
    cpuLowered: watch?.lowered ?? null,
  };
}
