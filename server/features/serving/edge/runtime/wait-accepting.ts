import type { ChildProcess } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Supervised, SupervisorState } from './state.ts';

/**
 * How often the edge also looks for a starting app itself, in case the sandbox's watch cannot work
 * (each look reads the kernel's connection table: milliseconds on the event loop).
 */
const FALLBACK_LOOK_MS = 500;

/**
 * How long the sandbox's watch may still say `listening` once a look from outside saw the app
 * listen first (a loaded machine can hold the watch's shell back): the app's connection helper
 * starts only when the watch says so. A watch that has not said it by then cannot tell.
 */
const WATCH_GRACE_MS = 3000;

/**
 * Waits until the port accepts connections, the process exits, or time runs out. In the sandbox
 * the sandbox itself says when (its readiness socket); otherwise this polls, every 5 ms for the
 * first two seconds (a small app listens within 50 ms of starting, and its first request waits
 * for this), then every 50 ms.
 */
export function waitUntilAccepting(st: SupervisorState, s: Supervised, timeoutMs: number): Promise<boolean> {
  return s.listening
    ? waitForWatch(st, s, s.listening, timeoutMs)
    : pollUntilAccepting(st, s, s.child, timeoutMs);
}

/** In the sandbox: its watch says when the app listens (or a slow look from outside does). */
async function waitForWatch(
  st: SupervisorState,
  s: Supervised,
  listening: Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  const child = s.child;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  // Should the watch not work here (a bash built without /dev/tcp), a slow look from outside.
  const looking = { on: true };
  const look = lookFromOutside(st, s, child, looking);
  const ok = await Promise.race([listening, look, s.exited.then(() => false), timeout]);
  looking.on = false;
  // The watch ends with the sandbox's first process, a moment before the whole sandbox has
  // exited: report the exit as such.
  if (!ok) await Promise.race([s.exited, timeout]);
  clearTimeout(timer);
  return ok && !s.stopping && s.child === child;
}

/** Every FALLBACK_LOOK_MS while `looking.on`, whether the app listens, seen from outside. */
async function lookFromOutside(
  st: SupervisorState,
  s: Supervised,
  child: ChildProcess | null,
  looking: { on: boolean },
): Promise<boolean> {
  while (looking.on) {
    await sleep(FALLBACK_LOOK_MS);
    if (looking.on && child?.pid !== undefined && (await st.sandbox.isListening(child.pid, s.port))) {
      endWatchUnlessHeard(child, s.listening);
      return true;
    }
  }
  return false;
}

/** Without the sandbox's watch: looks every 5 ms for two seconds, then every 50 ms. */
async function pollUntilAccepting(
  st: SupervisorState,
  s: Supervised,
  child: ChildProcess | null,
  timeoutMs: number,
): Promise<boolean> {
  const began = Date.now();
  const deadline = began + timeoutMs;
  let gone = false;
  void s.exited.then(() => {
    gone = true;
  });
  while (Date.now() < deadline && !gone && !s.stopping && s.child === child) {
    if (child?.pid !== undefined && (await st.sandbox.isListening(child.pid, s.port))) return !gone;
    await sleep(Date.now() - began < 2000 ? 5 : 50);
  }
  return false;
}

/**
 * Ends the sandbox's watch of `child` (it would try the port every 5 ms for ever) unless it says
 * `listening` within WATCH_GRACE_MS: a watch that is only late still starts the app's helper.
 */
function endWatchUnlessHeard(child: ChildProcess, listening: Promise<boolean> | null): void {
  const timer = setTimeout(() => (child.stdio[4] as Duplex | null | undefined)?.destroy(), WATCH_GRACE_MS);
  timer.unref();
  void listening?.then(() => clearTimeout(timer));
}
