import type { ChildProcess } from 'node:child_process';
import type { SpawnPlan } from '../../../platform/sandbox/index.ts';
import { createPacer, DEFAULT_OUTPUT_PACE, type Pacer } from '../output-pace.ts';
import type { CommandResult, OutputBudget, OutputStream, RunCommandOptions } from './types.ts';

/** A line longer than this is passed on in pieces, so one runaway line cannot exhaust memory. */
export const MAX_LINE = 16 * 1024;
/** After the main process exits, how long stray holders of its pipes may keep them open. */
export const DRAIN_MS = 2000;

/** The kept end of a stream that went past the budget, as lines within `room`, and their cost. */
export type TailLines = (room: number) => { lines: string[]; cost: number };

/**
 * What one run of a command keeps (runCommand makes it once the child is spawned), passed to
 * the functions that stream its output, pace it and end it rather than closed over.
 */
export interface RunState {
  opts: RunCommandOptions;
  /** argv[0]. */
  command: string;
  mask: (line: string) => string;
  /** bwrap said it could not start `command` (it reports that on stderr and exits 1). */
  notFound: boolean;
  plan: SpawnPlan;
  child: ChildProcess;
  budget: OutputBudget | undefined;
  timedOut: boolean;
  aborted: boolean;
  /** Ends the command when `timeoutMs` runs out (kill.ts). */
  timeout: NodeJS.Timeout | undefined;
  /** SIGKILL after the grace of a SIGTERM. */
  killTimer: NodeJS.Timeout | undefined;
  /** Destroys the pipes DRAIN_MS after the main process exited. */
  drainTimer: NodeJS.Timeout | undefined;
  onAbort: () => void;
  /** How the main process exited (before its pipes closed). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /**
   * Raw ends of streams that went past the budget, turned into lines once both have ended:
   * stderr's last, where the error usually is (what the log takes of stdout's end leaves it less room).
   */
  tails: Map<OutputStream, TailLines>;
  pacer: Pacer;
  toldSlowed: boolean;
  /** How many streams are left unread to keep the pace right now, since when, and for how long in all. */
  holding: number;
  holdingSince: number;
  heldMs: number;
  /** Resume the streams held for the pace at once: the command has ended (see 'exit'). */
  hurry: (() => void)[];
  resolve: (result: CommandResult) => void;
  reject: (err: Error) => void;
}

export interface RunStart {
  opts: RunCommandOptions;
  command: string;
  mask: (line: string) => string;
  plan: SpawnPlan;
  child: ChildProcess;
  resolve: (result: CommandResult) => void;
  reject: (err: Error) => void;
}

export function createRunState(start: RunStart): RunState {
  const budget = start.opts.budget;
  return {
    ...start,
    notFound: false,
    budget,
    timedOut: false,
    aborted: false,
    timeout: undefined,
    killTimer: undefined,
    drainTimer: undefined,
    onAbort: () => undefined,
    exit: undefined,
    tails: new Map(),
    pacer: createPacer(budget?.pace ?? DEFAULT_OUTPUT_PACE),
    toldSlowed: false,
    holding: 0,
    holdingSince: 0,
    heldMs: 0,
    hurry: [],
  };
}

/** Passes a line on, masked; bwrap's own word that the program was not found is kept back. */
export function emit(st: RunState, stream: OutputStream, line: string): void {
  if (stream === 'stderr' && line.startsWith(`bwrap: execvp ${st.command}: `)) {
    st.notFound = true;
    return;
  }
  st.opts.onLine?.(stream, st.mask(line));
}

/** A stream starts being left unread to keep the pace. */
export function hold(st: RunState): void {
  if (st.holding++ === 0) st.holdingSince = Date.now();
}

/** A stream held for the pace is read again. */
export function unhold(st: RunState): void {
  if (--st.holding === 0) st.heldMs += Date.now() - st.holdingSince;
}
