import { readdirSync, readFileSync } from 'node:fs';

/**
 * Live processes on the host whose command line holds `marker` (a zombie, which waits for a
 * reaper that is not ours to run, counts as gone). Pids that tenant code prints are of its own
 * PID namespace, so tests find its processes on the host by a marker in their arguments.
 */
export function hostProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (cmdline.includes(marker) && !/^\d+ \(.*\) Z/.test(stat)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}
