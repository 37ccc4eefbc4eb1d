import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import type { GroupEnd } from '../sandbox/cgroups.ts';
import type { Sandbox } from '../sandbox/index.ts';
import { spawnPlanned } from '../sandbox/spawn-planned.ts';
import { createMasker } from './mask-secrets.ts';

export type OutputStream = 'stdout' | 'stderr';

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

    const pump = (stream: Readable, name: OutputStream) => {
      const decoder = new StringDecoder('utf8');
      let buffer = '';
      const flushLines = (text: string) => {
        buffer += text;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) !== -1) {
          emit(name, buffer.slice(0, nl).replace(/\r$/, ''));
          buffer = buffer.slice(nl + 1);
        }
        // A secret straddling this cut would escape masking; acceptable for lines this long.
        while (buffer.length > MAX_LINE) {
          emit(name, buffer.slice(0, MAX_LINE));
          buffer = buffer.slice(MAX_LINE);
        }
      };
      stream.on('data', (chunk: Buffer) => flushLines(decoder.write(chunk)));
      stream.on('end', () => {
        flushLines(decoder.end());
        if (buffer.length > 0) emit(name, buffer.replace(/\r$/, ''));
        buffer = '';
      });
    };
    pump(child.stdout!, 'stdout');
    pump(child.stderr!, 'stderr');

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
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, DRAIN_MS);
    });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
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
    });
  });
}
