import { findFreePort } from '../../../../core/free-port.ts';
import type { Sandbox } from '../../../../platform/sandbox/index.ts';
import { spawnPlanned } from '../../../../platform/sandbox/spawn-planned.ts';
import { usedPorts, type Spare, type SupervisorState } from './state.ts';

/** How long after an app's start the next app's sandbox is prepared (not to slow this one). */
const SPARE_DELAY_MS = 500;

type SparePlans = NonNullable<Sandbox['spare']>;

/** Ends a spare sandbox; settles once it is gone, its control group too. */
export function killSpare(sp: Spare): Promise<void> {
  const { child } = sp;
  const gone =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // Gone already.
  }
  return gone.then(async () => {
    await sp.group?.release();
  });
}

/** The spare, when it is still up and has the current network rules; it is no longer the spare. */
export function takeSpare(st: SupervisorState): Spare | null {
  const sp = st.spare;
  st.spare = null;
  if (!sp || !st.sandbox.spare) return null;
  if (
    sp.child.exitCode !== null ||
    sp.child.signalCode !== null ||
    sp.generation !== st.sandbox.spare.generation()
  ) {
    void killSpare(sp);
    return null;
  }
  return sp;
}

/** Prepares the next app's sandbox in SPARE_DELAY_MS, unless one is there or on its way. */
export function prepareSpareSoon(st: SupervisorState): void {
  const plans = st.sandbox.spare;
  if (!plans || st.sandbox.mode !== 'bubblewrap' || st.closed || st.spare || st.preparing) return;
  st.preparing = true;
  setTimeout(() => {
    void prepareSpare(st, plans)
      .catch(() => undefined)
      .finally(() => {
        st.preparing = false;
      });
  }, SPARE_DELAY_MS).unref();
}

/** Starts a sandbox on a free port, to be the spare while it is up. */
async function prepareSpare(st: SupervisorState, plans: SparePlans): Promise<void> {
  const port = await findFreePort(st.opts.portRange, usedPorts(st));
  if (st.closed || st.spare) return;
  const plan = plans.plan(port);
  const child = spawnPlanned(plan);
  const sp: Spare = {
    child,
    port,
    generation: plans.generation(),
    ...(plan.group ? { group: plan.group } : {}),
  };
  child.on('error', () => undefined);
  child.once('exit', () => {
    if (st.spare === sp) st.spare = null;
  });
  st.spare = sp;
}
