import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import type { GroupEnd } from '../sandbox/cgroups.ts';
import type { Sandbox } from '../sandbox/index.ts';
import { spawnPlanned } from '../sandbox/spawn-planned.ts';
import { lineCost } from './log-cost.ts';
import { createMasker } from './mask-secrets.ts';
import { createPacer, DEFAULT_OUTPUT_PACE, type OutputPace } from './output-pace.ts';

export type OutputStream = 'stdout' | 'stderr';

/**
 * How much of a command's output the log takes (the build log's limit, server/jobs/log-buffer.ts).
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

/** A line longer than this is passed on in pieces, so one runaway line cannot exhaust memory. */
const MAX_LINE = 16 * 1024;
/** After the main process exits, how long stray holders of its pipes may keep them open. */
const DRAIN_MS = 2000;

/**
 * Runs a command in its own process group with exactly the given environment and streams its
 * output line by line, with secrets masked. Resolves when the process has ended; rejects only
 * when it could not be started (program not found, cwd missing).
 */
export function runCommand(opts: RunCommandOptions): Promise<CommandResult> {
  const [command, ...args] = opts.argv;
  if (!command) return Promise.reject(new Error('runCommand needs a program to run'));
  const mask = createMasker(opts.secrets ?? []);
  // bwrap reports a program it cannot start on stderr and exits 1, where spawn fails with ENOENT.
  let notFound = false;
  const emit = (stream: OutputStream, line: string) => {
    if (stream === 'stderr' && line.startsWith(`bwrap: execvp ${command}: `)) {
      notFound = true;
      return;
    }
    opts.onLine?.(stream, mask(line));
  };

  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) {
      resolve({ exitCode: null, signal: null, timedOut: false, aborted: true });
      return;
    }
    // The child leads a new process group, so killing -pid also ends everything it started
    // (npm -> sh -> node); in the sandbox, its PID namespace ends with it as well.
    const plan = opts.sandbox.plan({
      argv: [command, ...args],
      cwd: opts.cwd,
      env: opts.env,
      writable: opts.writable,
      readOnly: opts.readOnly ?? [],
      ...(opts.network === false ? { network: false } : {}),
    });
    const child = spawnPlanned(plan, { cwd: opts.sandbox.mode === 'off' ? opts.cwd : undefined });

    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

    const killGroup = (sig: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // ESRCH: the whole group is already gone.
      }
    };
    const terminate = () => {
      killGroup('SIGTERM');
      killTimer ??= setTimeout(() => killGroup('SIGKILL'), opts.killGraceMs ?? 2000);
    };

    const timeout = setTimeout(() => {
      timedOut = true;
      terminate();
    }, opts.timeoutMs);
    const onAbort = () => {
      aborted = true;
      terminate();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    const budget = opts.budget;
    /**
     * Raw ends of streams that went past the budget, turned into lines once both have ended:
     * stderr's last, where the error usually is (what the log takes of stdout's end leaves it less room).
     */
    const tails = new Map<OutputStream, (room: number) => { lines: string[]; cost: number }>();
    /** The ends of the streams that went past the budget, in the room the log has left: half each when both did. */
    const emitTails = () => {
      const out = tails.get('stdout');
      const err = tails.get('stderr');
      if (!out && !err) return;
      const room = budget!.tailBytes();
      const errLines = err?.(out ? Math.floor(room / 2) : room) ?? { lines: [], cost: 0 };
      const outLines = out?.(room - errLines.cost) ?? { lines: [], cost: 0 };
      const show = (stream: OutputStream, lines: string[]) => {
        for (const line of lines) {
          if (line.length <= MAX_LINE) emit(stream, line.replace(/\r$/, ''));
          else for (let i = 0; i < line.length; i += MAX_LINE) emit(stream, line.slice(i, i + MAX_LINE));
        }
      };
      show('stdout', outLines.lines);
      show('stderr', errLines.lines);
    };
    const pacer = createPacer(budget?.pace ?? DEFAULT_OUTPUT_PACE);
    let toldSlowed = false;
    /** How many streams are left unread to keep the pace right now, since when, and for how long in all. */
    let holding = 0;
    let holdingSince = 0;
    let heldMs = 0;
    const hold = () => {
      if (holding++ === 0) holdingSince = Date.now();
    };
    const unhold = () => {
      if (--holding === 0) heldMs += Date.now() - holdingSince;
    };
    /** Resume the streams held for the pace at once: the command has ended (see 'exit'). */
    const hurry: (() => void)[] = [];
    /** Resolves once the stream has ended and all it carried went to `onLine` or to `tails`. */
    const pump = (stream: Readable, name: OutputStream): Promise<void> => {
      const decoder = new StringDecoder('utf8');
      let buffer = '';
      let ended = false;
      let waiting = false;
      let done = false;
      let finished!: () => void;
      const whenDone = new Promise<void>((resolve) => (finished = resolve));
      /** Past the budget: the last raw chunks, and their bytes. */
      let skipping = false;
      let kept: Buffer[] = [];
      let keptBytes = 0;
      /** Whether the kept end no longer starts where the stream went past the budget. */
      let cutFront = false;
      const keep = (chunk: Buffer) => {
        kept.push(chunk);
        keptBytes += chunk.length;
        const max = budget!.tailBytes();
        while (kept.length > 1 && keptBytes - kept[0]!.length >= max) {
          budget!.leftOut(kept[0]!.length);
          cutFront = true;
          keptBytes -= kept.shift()!.length;
        }
      };
      /** Emits whole lines (and pieces of runaway ones) until the buffer is used or the log asks to wait. */
      const drain = () => {
        for (;;) {
          if (budget && !skipping && budget.room() <= 0) {
            // What was read but not split yet is the start of the kept end.
            skipping = true;
            // (A character split across that read is lost: it would be one in a flood.)
            const rest = buffer;
            buffer = '';
            if (rest) keep(Buffer.from(rest));
            return;
          }
          const nl = buffer.indexOf('\n');
          let line: string;
          if (nl !== -1) {
            line = buffer.slice(0, nl).replace(/\r$/, '');
            buffer = buffer.slice(nl + 1);
          } else if (buffer.length > MAX_LINE) {
            // A secret straddling this cut would escape masking; acceptable for lines this long.
            line = buffer.slice(0, MAX_LINE);
            buffer = buffer.slice(MAX_LINE);
          } else return;
          emit(name, line);
          const wait = budget?.ready();
          if (wait) {
            waiting = true;
            stream.pause();
            void wait.then(() => {
              waiting = false;
              drain();
              if (waiting) return;
              if (ended) finish();
              else stream.resume();
            });
            return;
          }
        }
      };
      const finish = () => {
        if (done) return;
        if (!skipping) {
          buffer += decoder.end();
          drain();
          if (waiting) return;
        }
        done = true;
        if (skipping) tails.set(name, tailLines);
        else if (buffer.length > 0) emit(name, buffer.replace(/\r$/, ''));
        buffer = '';
        finished();
      };
      /**
       * The kept end of a stream that went past the budget: its last whole lines within `room`
       * (in `lineCost`s), and what they cost; the rest is left out.
       */
      const tailLines = (room: number) => {
        const raw = Buffer.concat(kept);
        kept = [];
        const lines = raw.toString('utf8').split('\n');
        // A trailing newline ends the last line rather than starting an empty one.
        if (lines.at(-1) === '') lines.pop();
        // The first line may have lost its start (or be the middle of a runaway line): unless the
        // whole end was kept, it is left out with everything before it.
        const from = cutFront ? 1 : 0;
        let first = lines.length;
        let cost = 0;
        while (first > from && cost + lineCost(lines[first - 1]!) <= room) cost += lineCost(lines[--first]!);
        const shown = lines.slice(first);
        budget!.leftOut(raw.length - shown.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
        return { lines: shown, cost };
      };
      /** Set while the stream is left unread to keep the pace. */
      let paceTimer: NodeJS.Timeout | undefined;
      const resumeFromPace = () => {
        if (!paceTimer) return;
        clearTimeout(paceTimer);
        paceTimer = undefined;
        unhold();
        if (ended) finish();
        else stream.resume();
      };
      hurry.push(resumeFromPace);
      const pace = (bytes: number) => {
        const ms = pacer.take(bytes);
        if (pacer.slowed && !toldSlowed) {
          toldSlowed = true;
          budget!.slowed?.((budget!.pace ?? DEFAULT_OUTPUT_PACE).bytesPerSecond);
        }
        if (ms <= 0) return;
        stream.pause();
        hold();
        paceTimer = setTimeout(resumeFromPace, ms);
      };
      stream.on('data', (chunk: Buffer) => {
        if (skipping) {
          keep(chunk);
          return pace(chunk.length);
        }
        buffer += decoder.write(chunk);
        if (!waiting) drain();
      });
      // 'end' may come while the stream is held for the pace (its last chunk was read then): all
      // it carried is here, so its end is kept at once. 'close' without 'end': it was destroyed.
      const onEnd = () => {
        ended = true;
        if (paceTimer) resumeFromPace();
        else if (!waiting) finish();
      };
      stream.on('end', onEnd);
      stream.on('close', onEnd);
      return whenDone;
    };
    const pumped = Promise.all([pump(child.stdout!, 'stdout'), pump(child.stderr!, 'stderr')]);

    const cleanup = () => {
      clearTimeout(timeout);
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      opts.signal?.removeEventListener('abort', onAbort);
    };

    child.on('error', (err: NodeJS.ErrnoException) => {
      cleanup();
      const why =
        err.code === 'ENOENT'
          ? `"${command}" was not found on PATH (or ${opts.cwd} does not exist)`
          : err.message;
      reject(new Error(`Could not run ${command}: ${why}`));
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Background processes the command left behind would keep running (and keep our pipes
      // open) after it ends: the build is over, so they go too.
      killGroup('SIGKILL');
      // Nothing writes to the pipes any more: what they still hold (at most their size) is read
      // at once, so the kept end is complete without waiting out the pace.
      pacer.end();
      for (const go of hurry) go();
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, DRAIN_MS);
    });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
      // Both streams have closed, but one may still be passing its last lines on (the log asked
      // it to wait): the ends are taken once both are done.
      void pumped.then(() => closed(code, signal));
    });
    const closed = (code: number | null, signal: NodeJS.Signals | null) => {
      if (holding > 0) heldMs += Date.now() - holdingSince;
      if (heldMs > 0) budget?.heldBack?.(heldMs);
      emitTails();
      if (notFound) {
        reject(
          new Error(
            `Could not run ${command}: "${command}" was not found on PATH (or ${opts.cwd} does not exist)`,
          ),
        );
        return;
      }
      const ended = exit ?? { code, signal };
      const result = { exitCode: ended.code, signal: ended.signal, timedOut, aborted };
      if (!plan.group) return resolve(result);
      // Released when the sandbox's first process ended (spawnPlanned): this waits for its end.
      void plan.group.release().then((group) => resolve({ ...result, group }));
    };
  });
}
