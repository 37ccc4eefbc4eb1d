import type { Socket } from 'node:net';
import type { Sandbox, SandboxShare } from '../../../../platform/sandbox/index.ts';

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
