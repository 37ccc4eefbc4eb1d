import { cleanup, killGroup } from './kill.ts';
import { DRAIN_MS, type RunState } from './state.ts';
import { emitTails } from './tail.ts';

/** Ends the run from the child's events: start failure, exit, and the close of its pipes. */
export function watchChild(st: RunState, pumped: Promise<unknown>): void {
  st.child.on('error', (err: NodeJS.ErrnoException) => failedToStart(st, err));
  st.child.on('exit', (code, signal) => exited(st, code, signal));
  st.child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
    cleanup(st);
    // Both streams have closed, but one may still be passing its last lines on (the log asked
    // it to wait): the ends are taken once both are done.
    void pumped.then(() => closed(st, code, signal));
  });
}

function failedToStart(st: RunState, err: NodeJS.ErrnoException): void {
  cleanup(st);
  const why =
    err.code === 'ENOENT'
      ? `"${st.command}" was not found on PATH (or ${st.opts.cwd} does not exist)`
      : err.message;
  st.reject(new Error(`Could not run ${st.command}: ${why}`));
}

function exited(st: RunState, code: number | null, signal: NodeJS.Signals | null): void {
  st.exit = { code, signal };
  // Background processes the command left behind would keep running (and keep our pipes
  // open) after it ends: the build is over, so they go too.
  killGroup(st, 'SIGKILL');
  // Nothing writes to the pipes any more: what they still hold (at most their size) is read
  // at once, so the kept end is complete without waiting out the pace.
  st.pacer.end();
  for (const go of st.hurry) go();
  st.drainTimer = setTimeout(() => {
    st.child.stdout?.destroy();
    st.child.stderr?.destroy();
  }, DRAIN_MS);
}

function closed(st: RunState, code: number | null, signal: NodeJS.Signals | null): void {
  if (st.holding > 0) st.heldMs += Date.now() - st.holdingSince;
  if (st.heldMs > 0) st.budget?.heldBack?.(st.heldMs);
  emitTails(st);
  if (st.notFound) {
    st.reject(
      new Error(
        `Could not run ${st.command}: "${st.command}" was not found on PATH (or ${st.opts.cwd} does not exist)`,
      ),
    );
    return;
  }
  const ended = st.exit ?? { code, signal };
  const result = { exitCode: ended.code, signal: ended.signal, timedOut: st.timedOut, aborted: st.aborted };
  if (!st.plan.group) return st.resolve(result);
  // Released when the sandbox's first process ended (spawnPlanned): this waits for its end.
  void st.plan.group.release().then((group) => st.resolve({ ...result, group }));
}
