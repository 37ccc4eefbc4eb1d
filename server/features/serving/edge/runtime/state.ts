import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import type { SandboxGroup } from '../../../../platform/sandbox/cgroups.ts';
import type { Sandbox } from '../../../../platform/sandbox/index.ts';
import type { RuntimeSpec, RuntimeStatus, RuntimeStream, RuntimeSupervisorOptions } from './types.ts';

/** A sandbox started ahead of its app (Sandbox.spare), holding `port`. */
export interface Spare {
  child: ChildProcess;
  port: number;
  generation: number;
  /** Its control group, whose limits become the app's when it is taken. */
  group?: SandboxGroup;
}

/** A running app's connection helper, reached over the sandbox's IPC channel (fd 5). */
export interface Helper {
  child: ChildProcess;
  ready: boolean;
  next: number;
  pending: Map<number, (socket: Socket | null) => void>;
}

/** One supervised deployment's app, from start() until stop() or a failed start. */
export interface Supervised {
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

/** What the supervisor's functions share: its settings, its apps and its spare sandbox. */
export interface SupervisorState {
  opts: RuntimeSupervisorOptions;
  sandbox: Sandbox;
  startTimeoutMs: number;
  stopTimeoutMs: number;
  /** Restart delays (RuntimeSupervisorOptions.backoff). */
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
  /** The variables every app gets before its own. */
  baseEnv: Record<string, string>;
  /** Every supervised app, by deployment id. */
  running: Map<string, Supervised>;
  /**
   * The apps in state `running`, by port: the proxy asks about one per request (canConnect) and
   * per new connection (openConnection). Kept by setState and movePort, dropped by forget.
   */
  byPort: Map<number, Supervised>;
  /**
   * A sandbox started ahead of the next app (its network up, its rules loaded), so that a cold
   * start waits only for bwrap and the app: made half a second after each start, one at a time.
   */
  spare: Spare | null;
  preparing: boolean;
  closed: boolean;
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

/** A new supervisor's state: the options with their defaults, no app and no spare. */
export function createSupervisorState(opts: RuntimeSupervisorOptions): SupervisorState {
  const { sandbox } = opts;
  return {
    opts,
    sandbox,
    startTimeoutMs: opts.startTimeoutMs ?? 30_000,
    stopTimeoutMs: opts.stopTimeoutMs ?? 5000,
    initialMs: opts.backoff?.initialMs ?? 1000,
    maxMs: opts.backoff?.maxMs ?? 30_000,
    resetAfterMs: opts.backoff?.resetAfterMs ?? 30_000,
    baseEnv: {
      ...(opts.baseEnv ?? defaultBaseEnv()),
      ...(sandbox.mode === 'bubblewrap' ? { HOME: '/tmp' } : {}),
    },
    running: new Map(),
    byPort: new Map(),
    spare: null,
    preparing: false,
    closed: false,
  };
}

/** Passes one line to the log sink, cut at MAX_LINE; a failing sink must not take the app down. */
export function safeLog(st: SupervisorState, id: string, line: string, stream: RuntimeStream): void {
  try {
    st.opts.log(id, line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line, stream);
  } catch {
    // A failing log sink must not take the app down with it.
  }
}

/** A line of the supervisor's own about `s`. */
export function say(st: SupervisorState, s: Supervised, line: string): void {
  safeLog(st, s.id, `[slipway] ${line}`, 'supervisor');
}

/** The ports supervised apps hold. */
export function usedPorts(st: SupervisorState): Set<number> {
  const ports = new Set<number>();
  for (const s of st.running.values()) ports.add(s.port);
  return ports;
}

/** Sets an app's state, and keeps the index of running apps by port (byPort) in step with it. */
export function setState(st: SupervisorState, s: Supervised, state: RuntimeStatus['state']): void {
  s.state = state;
  if (state === 'running') {
    if (st.running.get(s.id) === s) st.byPort.set(s.port, s);
  } else if (st.byPort.get(s.port) === s) {
    st.byPort.delete(s.port);
  }
}

/** Moves an app to another port, in the index too should it be there. */
export function movePort(st: SupervisorState, s: Supervised, port: number): void {
  if (s.port === port) return;
  const indexed = st.byPort.get(s.port) === s;
  if (indexed) st.byPort.delete(s.port);
  s.port = port;
  if (indexed) st.byPort.set(port, s);
}

/** Forgets an app: stopped, or its start failed. */
export function forget(st: SupervisorState, s: Supervised): void {
  if (st.running.get(s.id) === s) st.running.delete(s.id);
  if (st.byPort.get(s.port) === s) st.byPort.delete(s.port);
}
