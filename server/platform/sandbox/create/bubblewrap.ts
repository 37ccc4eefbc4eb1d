import { chown } from 'node:fs/promises';
import { commandName, descendants, listensOn } from '../processes.ts';
import { planSpare, planSpawn, spareInput } from '../spawn.ts';
import { banner } from './banner.ts';
import { groupLimits, inGroup, refresh, type SandboxState } from './state.ts';
import type { Sandbox } from './types.ts';

/** Helpers of the sandbox itself, never signalled as the tenant's. */
const HELPERS = new Set(['setpriv', 'pasta', 'passt', 'passt.avx2', 'pasta.avx2', 'bwrap', 'prlimit']);

/** The bubblewrap sandbox over its state: every plan reads the settings current at the time. */
export function bubblewrapSandbox(s: SandboxState): Sandbox {
  const { config } = s;
  const sandbox: Sandbox = {
    mode: 'bubblewrap',
    unavailable: s.unavailable,
    limits: s.limits,
    disk: s.disk,
    cgroups: s.cgroups,
    banner: () => banner(s, undefined),
    plan: (req) => inGroup(s, req.share, (group) => planSpawn(s.settings, req, group)),
    withShare(share) {
      return {
        ...sandbox,
        share,
        banner: () => banner(s, share),
        plan: (req) => sandbox.plan({ ...req, share: req.share ?? share }),
      };
    },
    spare: {
      // Its app, and so its plan, is not known yet: the group gets the app's share in input().
      plan: (port) => inGroup(s, undefined, (group) => planSpare(s.settings, port, group)),
      input(req, group) {
        group?.setLimits(groupLimits(s.limits, req.share));
        return spareInput(s.settings, req);
      },
      generation: () => s.generation,
    },
    async prepare(dirs) {
      if (!s.isRoot) return;
      for (const dir of dirs) await chown(dir, config.user.uid, config.user.gid);
    },
    signalTenant,
    isListening,
    refresh: () => refresh(s),
  };
  const pools = s.cgroups.pools;
  if (pools) sandbox.served = (plans) => pools.served(plans);
  return sandbox;
}

/** Signals the tenant's processes under the spawned `pid` (not the sandbox's own helpers). */
function signalTenant(pid: number, signal: NodeJS.Signals): void {
  for (const child of descendants(pid)) {
    const name = commandName(child);
    if (name === null || HELPERS.has(name)) continue;
    try {
      process.kill(child, signal);
    } catch {
      // Gone meanwhile.
    }
  }
}

/** Whether a server app spawned as `pid` listens on `port` yet. */
async function isListening(pid: number, port: number): Promise<boolean> {
  // Any process inside the namespace will do: the first child of pasta is.
  const inside = descendants(pid).find((p) => commandName(p) !== null);
  return inside !== undefined && listensOn(inside, port);
}
