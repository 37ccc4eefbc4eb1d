import type { GroupEnd } from '../../../platform/sandbox/cgroups.ts';
import type { Sandbox } from '../../../platform/sandbox/index.ts';
import type { OutputPace } from '../output-pace.ts';

export type OutputStream = 'stdout' | 'stderr';

/**
 * How much of a command's output the log takes (the build log's limit, server/features/builds/job/log-buffer.ts).
 * Past `room`, output is not decoded, split or masked at all: the pipe counts it and keeps its
 * last bytes, which become lines when the stream ends. A flood costs then a few operations per
 * 64 KiB read, not per line, and it is read at a bounded rate (`pace`): a command printing faster
 * waits on its pipe, and every byte is still read, so the kept end is the output's very end.
 */
export interface OutputBudget {
  /** Bytes the log still takes line by line; at 0 or below the pipe stops making lines. */
  room(): number;
  /** Bytes (in `lineCost`s) of the end of the output the log can still take past `room`. */
  tailBytes(): number;
  /** Output dropped unread at the pipe. */
  leftOut(bytes: number): void;
  /** A promise while the log holds all it may before writing: the pipe stops reading until then. */
  ready(): Promise<void> | undefined;
  /** How fast output past `room` is read; default DEFAULT_OUTPUT_PACE (output-pace.ts). */
  pace?: OutputPace;
  /**
   * Called once per command when its output past `room` came faster than `pace.bytesPerSecond`
   * after the burst, so that reading it was held to that rate.
   */
  slowed?(bytesPerSecond: number): void;
  /** Called when a command has ended, with how long its pipes were left unread to keep the pace. */
  heldBack?(ms: number): void;
}

export interface RunCommandOptions {
  /** Program and arguments; no shell is involved unless argv[0] is one. argv[0] is looked up on `env.PATH`. */
  argv: readonly string[];
  cwd: string;
  /** The child's whole environment: nothing of the server's own environment is added. */
  env: Readonly<Record<string, string>>;
  /** The process group is killed when this runs out. */
  timeoutMs: number;
  /** Values replaced with `***` in every line before `onLine` sees it. */
  secrets?: readonly string[];
  /** Called for every complete line of output (and the last partial one). */
  onLine?: (stream: OutputStream, line: string) => void;
  /** Bounds what reaches `onLine` and paces it; unset: every line, as fast as it comes. */
  budget?: OutputBudget;
  /** Aborting kills the process group, as a timeout does. */
  signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL when killing; default 2 s. */
  killGraceMs?: number;
  /** Where the command runs: tenant code always goes through the sandbox. */
  sandbox: Sandbox;
  /** Host directories the command may write (bound at the same path inside the sandbox). */
  writable: readonly string[];
  /** Host paths it may read besides the toolchains. */
  readOnly?: readonly string[];
  /** false: no network at all (git reading a local repository). */
  network?: boolean;
}

export interface CommandResult {
  /** Exit code, or null when a signal ended the process. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** How the sandbox's control group ended (`oomKills`: its memory limit killed a process); absent without one. */
  group?: GroupEnd;
}
