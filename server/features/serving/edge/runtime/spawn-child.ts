import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describeBytes } from '../../../../core/format.ts';
import type { GroupEnd, SandboxGroup } from '../../../../platform/sandbox/cgroups.ts';
import type { SandboxRequest } from '../../../../platform/sandbox/index.ts';
import { spawnPlanned, startSpare } from '../../../../platform/sandbox/spawn-planned.ts';
import { connectionHelper, readiness } from './sandbox-channels.ts';
import { safeLog, say, type Spare, type Supervised, type SupervisorState } from './state.ts';

/** What happens once an app's process is gone (see crash.ts): passed in, not imported, to keep one way. */
export type OnExit = (s: Supervised, code: number | null, signal: NodeJS.Signals | null) => void;

/** Spawns the process on s.port; s.exited settles when it is gone, for any reason. */
export function spawnChild(st: SupervisorState, s: Supervised, spare: Spare | null, onExit: OnExit): void {
  let started: { child: ChildProcess; group: SandboxGroup | undefined };
  try {
    started = launch(st, s, spare);
  } catch (err) {
    s.child = null;
    s.exited = Promise.resolve();
    s.listening = null;
    s.helper = null;
    say(st, s, `could not start ${s.spec.command.join(' ')}: ${(err as Error).message}`);
    queueMicrotask(() => onExit(s, null, null));
    return;
  }
  const { child, group } = started;
  s.child = child;
  s.startedAt = Date.now();
  s.listening = readiness(child);
  s.helper = connectionHelper(child);
  pipeOutput(st, s, child);
  s.exited = exitOf(st, s, child, group, onExit);
}

/** The sandbox's request for s's app: its files read-only, its port, its variables and share. */
function requestOf(st: SupervisorState, s: Supervised): SandboxRequest {
  const [cmd, ...args] = s.spec.command;
  return {
    argv: [cmd!, ...args],
    cwd: s.spec.dir,
    env: { ...st.baseEnv, ...s.spec.env, PORT: String(s.port) },
    writable: [],
    readOnly: [s.spec.dir],
    ...(s.spec.writable?.length ? { binds: s.spec.writable } : {}),
    ports: [s.port],
    ...(s.spec.share ? { share: s.spec.share } : {}),
  };
}

/** Starts s's app: in the spare sandbox when there is one, else in a new one. Throws when it cannot. */
function launch(
  st: SupervisorState,
  s: Supervised,
  spare: Spare | null,
): { child: ChildProcess; group: SandboxGroup | undefined } {
  const { sandbox } = st;
  const req = requestOf(st, s);
  if (spare && sandbox.spare) {
    startSpare(spare.child, sandbox.spare.input(req, spare.group));
    return { child: spare.child, group: spare.group };
  }
  // Its own process group, so that stop() also ends what `npm start` or a shell spawned.
  const plan = sandbox.plan(req);
  const child = spawnPlanned(plan, { cwd: sandbox.mode === 'off' ? s.spec.dir : undefined });
  return { child, group: plan.group };
}

/** Passes the app's stdout and stderr on to the log, line by line. */
function pipeOutput(st: SupervisorState, s: Supervised, child: ChildProcess): void {
  for (const [stream, name] of [
    [child.stdout, 'stdout'],
    [child.stderr, 'stderr'],
  ] as const) {
    if (stream)
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (l) => safeLog(st, s.id, l, name));
  }
}

/**
 * Settles once `child` is gone, for any reason, and its control group with it (so that a stop
 * leaves no group behind); tells onExit at once (when it is still s's).
 */
function exitOf(
  st: SupervisorState,
  s: Supervised,
  child: ChildProcess,
  group: SandboxGroup | undefined,
  onExit: OnExit,
): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      void (group?.release() ?? Promise.resolve(null)).then((end) => {
        reportMemoryLimit(st, s, end);
        resolve();
      });
      if (s.child === child) onExit(s, code, signal);
    };
    child.once('exit', finish);
    child.once('error', (err) => {
      say(st, s, `could not start ${s.spec.command.join(' ')}: ${err.message}`);
      finish(null, null);
    });
  });
}

/** Says so when its group's memory limit ended the app (known once the group is released: `end`). */
function reportMemoryLimit(st: SupervisorState, s: Supervised, end: GroupEnd | null): void {
  if (!end?.oomKills || s.stopping) return;
  st.opts.onMemoryLimit?.();
  const plan = s.spec.share ? `, the limit of the ${s.spec.share.plan} plan` : '';
  say(
    st,
    s,
    `the app used more than ${describeBytes(end.memoryBytes)} of memory${plan}: the kernel stopped it`,
  );
}
