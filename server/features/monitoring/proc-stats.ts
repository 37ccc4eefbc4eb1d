import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Clock ticks per second of /proc's CPU times. Linux fixes USER_HZ at 100 for user space on
 * every common architecture; reading it would need `getconf CLK_TCK`, a process per sample.
 */
export const CLOCK_TICKS_PER_SECOND = 100;

export interface GroupUsage {
  /** User plus system CPU time of the group's live processes, in clock ticks. */
  cpuTicks: number;
  /** Resident memory of the group's processes, bytes. */
  rssBytes: number;
  /** The processes counted. */
  pids: number[];
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
export function parseStat(text: string): { pgrp: number; utime: number; stime: number } | null {
  const close = text.lastIndexOf(')');
  if (close === -1) return null;
  // After ") ": state(3) ppid(4) pgrp(5) ... utime(14) stime(15): index = field - 3.
  const f = text.slice(close + 2).split(' ');
  const pgrp = Number(f[2]);
  const utime = Number(f[11]);
  const stime = Number(f[12]);
  if (![pgrp, utime, stime].every(Number.isFinite)) return null;
  return { pgrp, utime, stime };
}

/** VmRSS of /proc/<pid>/status in bytes; 0 when absent (a zombie or kernel thread). */
export function parseVmRss(text: string): number {
  const m = /^VmRSS:\s+(\d+)\s*kB/m.exec(text);
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * CPU time and memory of the processes of each process group in `pgids`, from one pass over
 * /proc. The runtime supervisor starts each app in its own group (`sh -c` -> npm -> node), so a
 * group is an app, whichever of its processes does the work. A group with no process left is
 * missing from the answer; so is everything when /proc does not exist (not Linux).
 */
export async function readProcessGroups(
  pgids: readonly number[],
  procRoot = '/proc',
): Promise<Map<number, GroupUsage>> {
  const out = new Map<number, GroupUsage>();
  if (pgids.length === 0) return out;
  const wanted = new Set(pgids);
  let entries: string[];
  try {
    entries = await readdir(procRoot);
  } catch {
    return out;
  }
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (e) => {
        try {
          const stat = parseStat(await readFile(join(procRoot, e, 'stat'), 'utf8'));
          if (!stat || !wanted.has(stat.pgrp)) return;
          const rss = parseVmRss(await readFile(join(procRoot, e, 'status'), 'utf8'));
          const usage = out.get(stat.pgrp) ?? { cpuTicks: 0, rssBytes: 0, pids: [] };
          usage.cpuTicks += stat.utime + stat.stime;
          usage.rssBytes += rss;
          usage.pids.push(Number(e));
          out.set(stat.pgrp, usage);
        } catch {
          // The process ended between readdir and read: it no longer counts.
        }
      }),
  );
  return out;
}
