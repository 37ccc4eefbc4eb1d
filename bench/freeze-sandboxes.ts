import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Pauses and resumes every sandbox a service runs (all its control groups), for a bench's turns. */
export interface SandboxFreezer {
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  /** Thaws, and removes what freeze() made once its processes are gone. */
  close(): Promise<void>;
}

const V1_PIDS = '/sys/fs/cgroup/pids/slipway';
const V1_FREEZER = '/sys/fs/cgroup/freezer';

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};
const pids = (file: string) => read(file).split('\n').filter(Boolean);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The sandboxes of the service in process `serverPid` (its groups are named `<pid>-<n>`, see
 * server/platform/sandbox/cgroups.ts), frozen with the cgroup v1 freezer: their processes are moved into
 * a freezer group of the bench's own, which is then frozen (a process forked meanwhile is moved
 * too, and one forked inside is born frozen). Null where the service uses no v1 groups or the
 * freezer is not mounted: the bench then times the builds in sequence only.
 */
export function sandboxFreezer(serverPid: number): SandboxFreezer | null {
  if (!existsSync(V1_PIDS) || !existsSync(join(V1_FREEZER, 'cgroup.procs'))) return null;
  const mine = join(V1_FREEZER, `slipway-bench-${serverPid}`);
  mkdirSync(mine, { recursive: true });
  const groups = () => readdirSync(V1_PIDS).filter((n) => n.startsWith(`${serverPid}-`));
  const state = (s: 'FROZEN' | 'THAWED') => writeFileSync(join(mine, 'freezer.state'), s);
  const outside = () => {
    const inside = new Set(pids(join(mine, 'cgroup.procs')));
    return groups()
      .flatMap((g) => pids(join(V1_PIDS, g, 'cgroup.procs')))
      .filter((p) => !inside.has(p));
  };
  return {
    async freeze() {
      state('FROZEN');
      for (let tries = 0; tries < 1000; tries++) {
        const left = outside();
        const now = read(join(mine, 'freezer.state')).trim();
        if (left.length === 0 && now === 'FROZEN') return;
        // v1 stays FREEZING while a task sleeps uninterruptibly (the disk writer, the memory hog
        // under reclaim), and tries those tasks again only when asked again.
        if (now === 'FREEZING' && tries % 10 === 9) state('FROZEN');
        for (const pid of left) {
          try {
            writeFileSync(join(mine, 'cgroup.procs'), pid);
          } catch {
            // Gone meanwhile.
          }
        }
        await sleep(10);
      }
      throw new Error(
        `could not freeze the sandboxes of ${serverPid} in 10 s: ${outside().length} processes left, ` +
          `the freezer ${read(join(mine, 'freezer.state')).trim()}`,
      );
    },
    async thaw() {
      state('THAWED');
      for (let tries = 0; tries < 200 && read(join(mine, 'freezer.state')).trim() !== 'THAWED'; tries++)
        await sleep(10);
    },
    async close() {
      state('THAWED');
      for (let tries = 0; tries < 600; tries++) {
        try {
          rmdirSync(mine);
          return;
        } catch {
          await sleep(100);
        }
      }
    },
  };
}
