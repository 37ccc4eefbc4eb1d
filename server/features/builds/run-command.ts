import { spawnPlanned } from '../../platform/sandbox/spawn-planned.ts';
import { createMasker } from './mask-secrets.ts';
import { watchChild } from './run-command/child-events.ts';
import { startLimits } from './run-command/kill.ts';
import { pump } from './run-command/pump.ts';
import { createRunState } from './run-command/state.ts';
import type { CommandResult, RunCommandOptions } from './run-command/types.ts';

export type { CommandResult, OutputBudget, OutputStream, RunCommandOptions } from './run-command/types.ts';

/**
 * Runs a command in its own process group with exactly the given environment and streams its
 * output line by line, with secrets masked. Resolves when the process has ended; rejects only
 * when it could not be started (program not found, cwd missing). The pieces are in
 * `run-command/`, each taking the one RunState made here: the limits (kill.ts), the pipes
 * (pump.ts, lines.ts, tail.ts, pace.ts) and the child's end (child-events.ts).
 */
export function runCommand(opts: RunCommandOptions): Promise<CommandResult> {
  const [command, ...args] = opts.argv;
  if (!command) return Promise.reject(new Error('runCommand needs a program to run'));
  const mask = createMasker(opts.secrets ?? []);

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
    const st = createRunState({ opts, command, mask, plan, child, resolve, reject });
    startLimits(st);
    const pumped = Promise.all([pump(st, child.stdout!, 'stdout'), pump(st, child.stderr!, 'stderr')]);
    watchChild(st, pumped);
  });
}
