import { existsSync } from 'node:fs';
import { memoryLimitHint } from '../../../platform/sandbox/limit-hints.ts';
import { BuildCancelledError, BuildError, BuildTimeoutError } from '../../../platform/sandbox/build-error.ts';
import { runCommand } from '../run-command.ts';
import type { GitOutput, GitSession } from './types.ts';

/** Runs one git command in the workspace, within what is left of the checkout's time. */
export async function runGit(s: GitSession, args: string[]): Promise<GitOutput> {
  const { opts, repository, shown, local } = s;
  const output: string[] = [];
  const result = await runCommand({
    argv: ['git', ...args],
    cwd: opts.workspace,
    env: s.env,
    timeoutMs: Math.max(1, s.deadline - Date.now()),
    secrets: s.secrets,
    signal: opts.signal,
    sandbox: opts.sandbox,
    writable: [opts.workspace],
    // A local repository is shown read-only, and nothing else of the server's disk.
    readOnly: local && existsSync(local) ? [local] : [],
    // A local repository needs no network: the sandbox then starts without one, and faster.
    network: local === null,
    onLine: (_stream, line) => output.push(line.split(repository).join(shown)),
  });
  if (result.aborted) throw new BuildCancelledError('The build was cancelled.');
  if (result.timedOut) {
    throw new BuildTimeoutError(`Fetching ${shown} did not finish in time.`);
  }
  const memory = memoryLimitHint('git', result.group, opts.sandbox.share);
  if (memory) failWith(s, output, `Could not fetch ${shown}: ${memory}`, 'memory');
  return { ok: result.exitCode === 0, output };
}

/**
 * git's first fatal line says why; "Could not read from remote repository" and the advice after
 * it are the same for every failure.
 */
export function lastLine(output: string[]): string {
  const lines = output.map((l) => l.trim()).filter((l) => l !== '');
  const fatal = lines.find(
    (l) => /^(fatal|error):/.test(l) && !/Could not read from remote repository/.test(l),
  );
  return (fatal ?? lines.at(-1) ?? 'no output from git').replace(/^(fatal|error): /, '').replace(/\.$/, '');
}

/** Logs what git printed, then fails the build with `message`. */
export function failWith(s: GitSession, output: string[], message: string, limit?: 'memory'): never {
  for (const line of output) s.opts.log(line);
  throw new BuildError(message, limit ? { limit } : {});
}

/** The repository could not be read at all. */
export function unreachable(s: GitSession, output: string[]): never {
  return failWith(
    s,
    output,
    `Could not read the repository ${s.shown}: ${lastLine(output)}. ${s.opts.unreachableHint ?? 'Check the URL and that the repository is public.'}`,
  );
}

/** The repository was read, and has no such ref or commit. */
export const missingRef = (output: string[]) =>
  /couldn't find remote ref|not our ref|unadvertised object/i.test(output.join('\n'));
