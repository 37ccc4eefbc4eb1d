import { relative } from 'node:path';
import { describeElapsed } from '../../../core/format.ts';
import type { Sandbox } from '../../../platform/sandbox/index.ts';
import { cpuLoweredNote, limitHint, memoryLimitHint } from '../../../platform/sandbox/limit-hints.ts';
import type { Workspace } from '../../../platform/sandbox/workspace-disk.ts';
import { BuildError, BuildTimeoutError } from '../../../platform/sandbox/build-error.ts';
import { createUsageFilter, installHint } from '../package-manager-output.ts';
import { type OutputBudget, runCommand } from '../run-command.ts';

export interface StageRunnerOptions {
  sandbox: Sandbox;
  /** The build's workspace: the only place its commands may write. */
  ws: Workspace;
  /** The checkout, for saying where a command ran. */
  src: string;
  /** Where commands run unless told otherwise. */
  app: string;
  /** A local repository stays readable, as for the checkout: it is the project's own. */
  localRepo: string | null;
  secrets: string[];
  budget?: OutputBudget;
  signal: AbortSignal;
  /** The build's time left; throws once it is up. */
  remaining: () => number;
  timeoutMessage: string;
  /** Throws the error of a build stopped from outside (cancelled, or its disk full). */
  cancelled: () => never;
  info: (line: string) => void;
}

/**
 * Runs one of the build's commands (the install, the build) in the sandbox, logging its lines
 * and turning each way it can fail into a BuildError that says why and what to do.
 */
export function createStageRunner(o: StageRunnerOptions) {
  return async (title: string, argv: string[], env: Record<string, string>, cwd = o.app) => {
    const shown = argv[0] === 'sh' ? (argv[2] ?? '') : argv.join(' ');
    const where = cwd === o.src ? '' : ` (in ${relative(o.src, cwd)})`;
    o.info(`==> ${title}${where}: ${shown}`);
    const begun = Date.now();
    const tail: string[] = [];
    const readable = createUsageFilter();
    const result = await runCommand({
      argv,
      cwd,
      env,
      timeoutMs: o.remaining(),
      secrets: o.secrets,
      ...(o.budget ? { budget: o.budget } : {}),
      signal: o.signal,
      sandbox: o.sandbox,
      writable: [o.ws.dir],
      readOnly: o.localRepo ? [o.localRepo] : [],
      onLine: (_stream, raw) => {
        const line = readable(raw);
        if (line === null) return;
        o.info(line);
        tail.push(line);
        if (tail.length > 50) tail.shift();
      },
    }).catch((err: Error) => {
      throw new BuildError(`${title} failed: ${err.message}`);
    });
    const lowered = cpuLoweredNote(`"${shown}"`, result.group, o.sandbox.limits, o.sandbox.share);
    if (lowered) o.info(lowered);
    if (result.aborted) o.cancelled();
    // A command that filled its workspace's file system (it got ENOSPC) may still exit 0.
    const full = await o.ws.full();
    if (full) throw new BuildError(full, { limit: 'disk' });
    if (result.timedOut) throw new BuildTimeoutError(o.timeoutMessage);
    if (result.exitCode !== 0) {
      const how =
        result.exitCode === null ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
      const memory = memoryLimitHint('The build', result.group, o.sandbox.share);
      const hit = memory ? null : limitHint(o.sandbox.limits, tail, result.signal);
      const hint = memory ?? hit?.text ?? installHint(tail);
      const limit = memory ? 'memory' : hit?.limit;
      throw new BuildError(
        `${title} failed: "${shown}" ${how}.${hint ? ` ${hint}` : ''}`,
        limit ? { limit } : {},
      );
    }
    o.info(`${title} finished in ${describeElapsed(Date.now() - begun)}`);
  };
}

export type StageRunner = ReturnType<typeof createStageRunner>;
