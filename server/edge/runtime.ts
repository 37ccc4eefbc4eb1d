import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeBytes } from '../lib/format.ts';
import type { SandboxGroup } from '../sandbox/cgroups.ts';
import type { Sandbox, SandboxShare } from '../sandbox/index.ts';
import { spawnPlanned, startSpare } from '../sandbox/spawn-planned.ts';
import { findFreePort } from '../lib/free-port.ts';

/** How to run a deployment's server process. */
export interface RuntimeSpec {
  /** Working directory: the deployment's files, shown read-only to the app. */
  dir: string;
  /** argv, e.g. `['node', 'server.js']` or `['npm', 'start']`; run without a shell. */
  command: string[];
  /** The deployment's environment variables (PORT is set by the supervisor). */
  env: Record<string, string>;
  /** Folders inside `dir` the app may write: each bound from a host folder of its own. */
  writable?: readonly { source: string; target: string }[];
  /** The memory and CPU share of its sandbox, from its organization's plan. */
  share?: SandboxShare;
}

/** Where a line came from: the app's stdout or stderr, or the supervisor itself. */
export type RuntimeStream = 'stdout' | 'stderr' | 'supervisor';

export interface RuntimeSupervisorOptions {
  /** Receives every output line, for the deployment's `runtime` log. Must not throw. */
  log(deploymentId: string, line: string, stream: RuntimeStream): void;
  /** Ports to use, inclusive; default: any free port the kernel picks. */
  portRange?: readonly [number, number];
  /** How long a start may take to accept TCP connections (default 30 s). */
  startTimeoutMs?: number;
  /** How long a process gets between SIGTERM and SIGKILL (default 5 s). */
  stopTimeoutMs?: number;
  /** Restart delays: doubling from `initialMs` to `maxMs`, back to `initialMs` after `resetAfterMs` up. */
  backoff?: { initialMs?: number; maxMs?: number; resetAfterMs?: number };
  /**
   * The variables every app gets before its own. Default: PATH, HOME, LANG and TZ of this process
   * and NODE_ENV=production; the server's own secrets (database URL, encryption key) never leak in.
   */
  baseEnv?: Record<string, string>;
  /**
   * Where apps run: the app sees its own files read-only, a private /tmp (its HOME), and the
   * network the sandbox allows; its port is forwarded from the host's 127.0.0.1.
   */
  sandbox: Sandbox;
  /** An app's control group hit its memory limit: the kernel stopped it (the operator's metrics). */
  onMemoryLimit?: () => void;
}

export interface RuntimeStatus {
  state: 'starting' | 'running' | 'restarting';
  port: number;
  pid: number | undefined;
  /** Restarts after crashes since start(). */
  restarts: number;
}

export interface RuntimeSupervisor {
  /** Starts the process and resolves once it accepts connections; a running one is reused. */
  start(deploymentId: string, spec: RuntimeSpec): Promise<{ port: number }>;
  /** Stops the process (SIGTERM, then SIGKILL) and forgets it. */
  stop(deploymentId: string): Promise<void>;
  stopAll(): Promise<void>;
  /**
   * The port of a supervised deployment, also while it starts or restarts (the proxy then answers
   * 502): a supervised deployment is never served as static files, which would expose its source.
   */
  portOf(deploymentId: string): number | undefined;
  status(deploymentId: string): RuntimeStatus | undefined;
  /**
   * Opens a connection to the app listening on `port` from inside its sandbox (its connection
   * helper, see connect-helper.ts) and gives it to `done`, or null when that failed. Returns false,
   * calling nothing, when there is no such helper ready (no sandbox, the app is starting): then
   * connect to 127.0.0.1:port, pasta's forward.
   */
  openConnection(port: number, done: (socket: Socket | null) => void): boolean;
  /** Whether `openConnection` would open one to `port` now (its app's helper is ready). */
  canConnect(port: number): boolean;
  /** The port of the sandbox started ahead of the next app (see `spare`), if one is up. */
  sparePort(): number | undefined;
  /** How many apps are in each state now (the operator's metrics). */
  counts(): Record<RuntimeStatus['state'], number>;
}

/** A sandbox started ahead of its app (Sandbox.spare), holding `port`. */
interface Spare {
  child: ChildProcess;
  port: number;
  generation: number;
  /** Its control group, whose limits become the app's when it is taken. */
  group?: SandboxGroup;
}

/** How long after an app's start the next app's sandbox is prepared (not to slow this one). */
const SPARE_DELAY_MS = 500;

/**
 * How often the edge also looks for a starting app itself, in case the sandbox's watch cannot work
 * (each look reads the kernel's connection table: milliseconds on the event loop).
 */
const FALLBACK_LOOK_MS = 500;

/** How long after an app listens its connection helper starts (see spawn.ts, READY_WATCH). */
const HELPER_START_DELAY_MS = 200;

/** How long a connection from an app's helper may take before the edge goes through pasta. */
const HELPER_CONNECT_MS = 1000;

/** A running app's connection helper, reached over the sandbox's IPC channel (fd 5). */
interface Helper {
  child: ChildProcess;
  ready: boolean;
  next: number;
  pending: Map<number, (socket: Socket | null) => void>;
}

interface Supervised {
  id: string;
  spec: RuntimeSpec;
  port: number;
  state: RuntimeStatus['state'];
  child: ChildProcess | null;
  exited: Promise<void>;
  /** In the sandbox: true once the sandbox says the app accepts connections, false if it ends first. */
  listening: Promise<boolean> | null;
  helper: Helper | null;
  startedAt: number;
  restarts: number;
  delayMs: number;
  timer: NodeJS.Timeout | null;
  stopping: boolean;
  ready: Promise<{ port: number }>;
}

const MAX_LINE = 8192;

function defaultBaseEnv(): Record<string, string> {
  const env: Record<string, string> = { NODE_ENV: 'production' };
  for (const key of ['PATH', 'HOME', 'LANG', 'TZ']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/**
 * Resolves true when the sandbox writes `listening` to the child's readiness socket (fd 4, see
 * SpawnPlan.readyFd), false when the socket closes first; null without one (no sandbox).
 */
function readiness(child: ChildProcess): Promise<boolean> | null {
  const socket = child.stdio[4] as Duplex | null | undefined;
  if (!socket) return null;
  return new Promise((resolve) => {
    let said = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      said += chunk;
      if (!said.includes('listening')) return;
      resolve(true);
      // Then the connection helper: once the app's first requests (through pasta) are answered.
      setTimeout(() => socket.end('helper\n'), HELPER_START_DELAY_MS).unref();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(false));
    // The watch ends when its socket does: with the sandbox gone it has nothing left to watch.
    child.once('exit', () => socket.destroy());
  });
}

/** The connection helper on the child's IPC channel, once it says it is ready; null without one. */
function connectionHelper(child: ChildProcess): Helper | null {
  if (!child.send) return null;
  const helper: Helper = { child, ready: false, next: 0, pending: new Map() };
  child.on('message', (message: unknown, handle: unknown) => {
    if (typeof message !== 'object' || message === null) return;
    const m = message as { ready?: unknown; connected?: unknown; failed?: unknown };
    if (m.ready === true) helper.ready = true;
    const id = typeof m.connected === 'number' ? m.connected : m.failed;
    if (typeof id !== 'number') return;
    const done = helper.pending.get(id);
    helper.pending.delete(id);
    const socket = handle instanceof Socket && m.connected === id ? handle : null;
    // Too late (the edge went through pasta meanwhile): not needed any more.
    if (!done) socket?.destroy();
    else done(socket);
  });
  child.on('disconnect', () => {
    helper.ready = false;
    for (const done of helper.pending.values()) done(null);
    helper.pending.clear();
  });
  // The channel must not keep the service running, nor fail it.
  child.on('error', () => undefined);
  return helper;
}

/** Runs deployments' server processes on 127.0.0.1 and keeps them up. */
export function createRuntimeSupervisor(opts: RuntimeSupervisorOptions): RuntimeSupervisor {
  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 5000;
  const initialMs = opts.backoff?.initialMs ?? 1000;
  const maxMs = opts.backoff?.maxMs ?? 30_000;
  const resetAfterMs = opts.backoff?.resetAfterMs ?? 30_000;
  const { sandbox } = opts;
  const baseEnv = {
    ...(opts.baseEnv ?? defaultBaseEnv()),
    ...(sandbox.mode === 'bubblewrap' ? { HOME: '/tmp' } : {}),
  };
  const running = new Map<string, Supervised>();

  const say = (s: Supervised, line: string) => safeLog(s.id, `[slipway] ${line}`, 'supervisor');
  const safeLog = (id: string, line: string, stream: RuntimeStream) => {
    try {
      opts.log(id, line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line, stream);
    } catch {
      // A failing log sink must not take the app down with it.
    }
  };
  const usedPorts = () => new Set([...running.values()].map((s) => s.port));

  /** Spawns the process on s.port; s.exited settles when it is gone, for any reason. */
  function spawnChild(s: Supervised, spare: Spare | null = null): void {
    const [cmd, ...args] = s.spec.command;
    let child: ChildProcess;
    let group: SandboxGroup | undefined;
    try {
      const req = {
        argv: [cmd!, ...args],
        cwd: s.spec.dir,
        env: { ...baseEnv, ...s.spec.env, PORT: String(s.port) },
        writable: [],
        readOnly: [s.spec.dir],
        ...(s.spec.writable?.length ? { binds: s.spec.writable } : {}),
        ports: [s.port],
        ...(s.spec.share ? { share: s.spec.share } : {}),
      };
      if (spare && sandbox.spare) {
        child = spare.child;
        group = spare.group;
        startSpare(child, sandbox.spare.input(req, spare.group));
      } else {
        // Its own process group, so that stop() also ends what `npm start` or a shell spawned.
        const plan = sandbox.plan(req);
        group = plan.group;
        child = spawnPlanned(plan, { cwd: sandbox.mode === 'off' ? s.spec.dir : undefined });
      }
    } catch (err) {
      s.child = null;
      s.exited = Promise.resolve();
      s.listening = null;
      s.helper = null;
      say(s, `could not start ${s.spec.command.join(' ')}: ${(err as Error).message}`);
      queueMicrotask(() => onExit(s, null, null));
      return;
    }
    s.child = child;
    s.startedAt = Date.now();
    s.listening = readiness(child);
    s.helper = connectionHelper(child);
    for (const [stream, name] of [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ] as const) {
      if (stream)
        createInterface({ input: stream, crlfDelay: Infinity }).on('line', (l) => safeLog(s.id, l, name));
    }
    s.exited = new Promise((resolve) => {
      let done = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        if (done) return;
        done = true;
        // Whether its group's memory limit ended it is known once the group is released.
        void (group?.release() ?? Promise.resolve(null)).then((end) => {
          if (end?.oomKills && !s.stopping) {
            opts.onMemoryLimit?.();
            const plan = s.spec.share ? `, the limit of the ${s.spec.share.plan} plan` : '';
            say(
              s,
              `the app used more than ${describeBytes(end.memoryBytes)} of memory${plan}: the kernel stopped it`,
            );
          }
        });
        resolve();
        if (s.child === child) onExit(s, code, signal);
      };
      child.once('exit', finish);
      child.once('error', (err) => {
        say(s, `could not start ${s.spec.command.join(' ')}: ${err.message}`);
        finish(null, null);
      });
    });
  }

  function onExit(s: Supervised, code: number | null, signal: NodeJS.Signals | null): void {
    s.child = null;
    if (s.stopping || running.get(s.id) !== s) return;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code ?? 'unknown'}`;
    // While starting, start() reports the failure; only a process that was up is restarted.
    if (s.state === 'starting') {
      say(s, `process ${how} before it listened on port ${s.port}`);
      return;
    }
    s.delayMs = Date.now() - s.startedAt >= resetAfterMs ? initialMs : Math.min(s.delayMs * 2, maxMs);
    s.state = 'restarting';
    say(s, `process ${how}; restarting in ${Math.round(s.delayMs / 100) / 10}s`);
    s.timer = setTimeout(() => void restart(s), s.delayMs);
    s.timer.unref();
  }

  async function restart(s: Supervised): Promise<void> {
    s.timer = null;
    if (s.stopping) return;
    s.restarts++;
    // Keep the port when it is still free; the proxy reads it live, so a new one also works.
    const others = new Set([...usedPorts()].filter((p) => p !== s.port));
    s.port = await findFreePort([s.port, s.port]).catch(() => findFreePort(opts.portRange, others));
    if (s.stopping) return;
    say(s, `restarting (restart ${s.restarts}) on port ${s.port}`);
    spawnChild(s);
    void waitUntilAccepting(s, startTimeoutMs).then((ok) => {
      if (ok && s.state === 'restarting' && s.child) s.state = 'running';
    });
  }

  /**
   * Waits until the port accepts connections, the process exits, or time runs out. In the sandbox
   * the sandbox itself says when (its readiness socket); otherwise this polls, every 5 ms for the
   * first two seconds (a small app listens within 50 ms of starting, and its first request waits
   * for this), then every 50 ms.
   */
  async function waitUntilAccepting(s: Supervised, timeoutMs: number): Promise<boolean> {
    const child = s.child;
    const began = Date.now();
    const deadline = began + timeoutMs;
    if (s.listening) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      // Should the watch not work here (a bash built without /dev/tcp), a slow look from outside.
      let looking = true;
      const look = (async () => {
        while (looking) {
          await sleep(FALLBACK_LOOK_MS);
          if (looking && child?.pid !== undefined && (await sandbox.isListening(child.pid, s.port))) {
            // The watch cannot tell: end it (it would try the port every 5 ms for ever).
            (child.stdio[4] as Duplex | null | undefined)?.destroy();
            return true;
          }
        }
        return false;
      })();
      const ok = await Promise.race([s.listening, look, s.exited.then(() => false), timeout]);
      looking = false;
      // The watch ends with the sandbox's first process, a moment before the whole sandbox has
      // exited: report the exit as such.
      if (!ok) await Promise.race([s.exited, timeout]);
      clearTimeout(timer);
      return ok && !s.stopping && s.child === child;
    }
    let gone = false;
    void s.exited.then(() => {
      gone = true;
    });
    while (Date.now() < deadline && !gone && !s.stopping && s.child === child) {
      if (child?.pid !== undefined && (await sandbox.isListening(child.pid, s.port))) return !gone;
      await sleep(Date.now() - began < 2000 ? 5 : 50);
    }
    return false;
  }

  /** Signals the process group of `pid`; the lone process when the group cannot be signalled. */
  function sendSignal(pid: number, sig: NodeJS.Signals, groupOnly = false): void {
    try {
      process.kill(-pid, sig);
    } catch {
      if (groupOnly) return;
      try {
        process.kill(pid, sig);
      } catch {
        // Already gone.
      }
    }
  }

  async function terminate(s: Supervised): Promise<void> {
    s.stopping = true;
    if (s.timer) clearTimeout(s.timer);
    s.timer = null;
    const pid = s.child?.pid;
    if (pid === undefined) return;
    const exited = s.exited;
    // In the sandbox, the app gets the SIGTERM (its helpers would end it without a chance to
    // finish); SIGKILL to the group ends the whole sandbox.
    if (sandbox.mode === 'bubblewrap') sandbox.signalTenant(pid, 'SIGTERM');
    else sendSignal(pid, 'SIGTERM');
    const killer = setTimeout(() => sendSignal(pid, 'SIGKILL'), stopTimeoutMs);
    await exited;
    clearTimeout(killer);
    // What the process spawned (npm's node, a shell's command) may outlive it: end its group too.
    // Only the group: the lone pid may already belong to an unrelated process.
    sendSignal(pid, 'SIGKILL', true);
  }

  /**
   * A sandbox started ahead of the next app (its network up, its rules loaded), so that a cold
   * start waits only for bwrap and the app: made half a second after each start, one at a time.
   */
  let spare: Spare | null = null;
  let preparing = false;
  let closed = false;

  const killSpare = (sp: Spare) => {
    try {
      process.kill(-sp.child.pid!, 'SIGKILL');
    } catch {
      // Gone already.
    }
  };

  /** The spare, when it is still up and has the current network rules. */
  function takeSpare(): Spare | null {
    const sp = spare;
    spare = null;
    if (!sp || !sandbox.spare) return null;
    if (
      sp.child.exitCode !== null ||
      sp.child.signalCode !== null ||
      sp.generation !== sandbox.spare.generation()
    ) {
      killSpare(sp);
      return null;
    }
    return sp;
  }

  function prepareSpareSoon(): void {
    const plans = sandbox.spare;
    if (!plans || sandbox.mode !== 'bubblewrap' || closed || spare || preparing) return;
    preparing = true;
    setTimeout(() => {
      void (async () => {
        const port = await findFreePort(opts.portRange, usedPorts());
        if (closed || spare) return;
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
          if (spare === sp) spare = null;
        });
        spare = sp;
      })()
        .catch(() => undefined)
        .finally(() => {
          preparing = false;
        });
    }, SPARE_DELAY_MS).unref();
  }

  async function begin(deploymentId: string, spec: RuntimeSpec): Promise<{ port: number }> {
    if (spec.command.length === 0) throw new Error('the runtime command is empty');
    const s = running.get(deploymentId)!;
    const ready = takeSpare();
    s.port = ready ? ready.port : await findFreePort(opts.portRange, usedPorts());
    if (s.stopping) {
      if (ready) killSpare(ready);
      throw new Error(`deployment ${deploymentId} was stopped while starting`);
    }
    say(s, `starting ${spec.command.join(' ')} on port ${s.port}`);
    spawnChild(s, ready);
    const up = await waitUntilAccepting(s, startTimeoutMs);
    prepareSpareSoon();
    if (up) {
      s.state = 'running';
      say(s, `listening on port ${s.port}`);
      return { port: s.port };
    }
    const why = s.stopping
      ? 'it was stopped'
      : s.child
        ? `it did not accept connections on port ${s.port} within ${startTimeoutMs / 1000}s (it must listen on process.env.PORT)`
        : 'the process exited (see the runtime log)';
    if (running.get(deploymentId) === s) running.delete(deploymentId);
    await terminate(s);
    throw new Error(`The app of deployment ${deploymentId} did not start: ${why}.`);
  }

  async function stop(deploymentId: string): Promise<void> {
    const s = running.get(deploymentId);
    if (!s) return;
    running.delete(deploymentId);
    await terminate(s);
    say(s, 'stopped');
  }

  /** The connection helper of the app running on `port`, when it is ready to open one. */
  function readyHelper(port: number): Helper | null {
    let helper: Helper | null = null;
    for (const s of running.values()) {
      if (s.port === port && s.state === 'running') helper = s.helper;
    }
    return helper?.ready && helper.child.connected ? helper : null;
  }

  return {
    start(deploymentId, spec) {
      const existing = running.get(deploymentId);
      if (existing) return existing.ready;
      const s: Supervised = {
        id: deploymentId,
        spec,
        port: 0,
        state: 'starting',
        child: null,
        exited: Promise.resolve(),
        listening: null,
        helper: null,
        startedAt: Date.now(),
        restarts: 0,
        delayMs: initialMs / 2,
        timer: null,
        stopping: false,
        ready: Promise.resolve({ port: 0 }),
      };
      running.set(deploymentId, s);
      s.ready = begin(deploymentId, spec);
      // A caller that never awaits must not produce an unhandled rejection.
      s.ready.catch(() => undefined);
      return s.ready;
    },
    stop,
    async stopAll() {
      closed = true;
      const sp = spare;
      spare = null;
      if (sp) killSpare(sp);
      await Promise.all([...running.keys()].map(stop));
    },
    portOf(deploymentId) {
      const s = running.get(deploymentId);
      return s && s.port > 0 ? s.port : undefined;
    },
    canConnect(port) {
      return readyHelper(port) !== null;
    },
    openConnection(port, done) {
      const h = readyHelper(port);
      if (!h) return false;
      const id = ++h.next;
      const timer = setTimeout(() => {
        if (h.pending.delete(id)) done(null);
      }, HELPER_CONNECT_MS);
      timer.unref();
      h.pending.set(id, (socket) => {
        clearTimeout(timer);
        done(socket);
      });
      h.child.send({ connect: id }, (err) => {
        if (err && h.pending.delete(id)) {
          clearTimeout(timer);
          done(null);
        }
      });
      return true;
    },
    sparePort() {
      return spare && spare.child.exitCode === null ? spare.port : undefined;
    },
    counts() {
      const counts = { starting: 0, running: 0, restarting: 0 };
      for (const s of running.values()) counts[s.state]++;
      return counts;
    },
    status(deploymentId) {
      const s = running.get(deploymentId);
      return s ? { state: s.state, port: s.port, pid: s.child?.pid, restarts: s.restarts } : undefined;
    },
  };
}
