import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { Sandbox } from '../../platform/sandbox/index.ts';
import { redactUrl } from '../../core/redact-url.ts';
import { memoryLimitHint } from '../../platform/sandbox/limit-hints.ts';
import { SANDBOX_GITCONFIG } from '../../platform/sandbox/spawn.ts';
import { BuildCancelledError, BuildError, BuildTimeoutError } from '../../platform/sandbox/build-error.ts';
import { parseRepositoryUrl } from '../github/index.ts';
import { runCommand } from './run-command.ts';

export interface CheckoutOptions {
  /** https, http, ssh, git or file URL, or a local path. */
  repositoryUrl: string;
  /** What to advise when the repository cannot be read; default: check the URL and that it is public. */
  unreachableHint?: string;
  /** A branch name (`main`) or a full ref (`refs/pull/12/head`). */
  ref: string;
  /** Pin this commit (7 to 40 hex characters) instead of the head of `ref`. */
  commit?: string | null;
  /** Directory the repository is checked out into (created; should not exist or be empty). */
  workspace: string;
  log: (line: string) => void;
  /** For the whole checkout. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** PATH that git is found on; default the server's. */
  path?: string;
  /** git runs in it, with the workspace writable and a local repository readable. */
  sandbox: Sandbox;
}

export interface CheckoutResult {
  /** Full 40-character hash of the checked-out commit. */
  commitHash: string;
  /** The commit author's e-mail. */
  author: string;
  commitMessage: string;
}

function urlSecrets(url: string): string[] {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^@/]*)@/i.exec(url);
  if (!m?.[1]) return [];
  return m[1].split(':').filter((part) => part.length > 0);
}

/**
 * The directory of a local repository, as git reads the URL (repository-url.ts), or null for a
 * remote one.
 */
export function localRepositoryPath(url: string): string | null {
  const location = parseRepositoryUrl(normalizeRepository(url));
  return location.kind === 'local' ? location.path : null;
}

/** A plain local path is made absolute: git runs inside the workspace, not the server's cwd. */
function normalizeRepository(url: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[\w.-]+@[\w.-]+:/.test(url)) return url;
  return isAbsolute(url) ? url : resolve(url);
}

/**
 * git's environment. Nothing of the server's environment is inherited (no SSH agent, no
 * credential helpers, no global or system config), prompts fail instead of hanging, and only
 * the transports the API accepts are allowed (never `ext::`, which runs commands).
 */
function gitEnv(path: string, home: string): Record<string, string> {
  return {
    PATH: path,
    HOME: home,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    // Only the sandbox's own (safe.directory); outside the sandbox the path does not exist, and
    // git reads nothing.
    GIT_CONFIG_GLOBAL: SANDBOX_GITCONFIG,
    GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
    GIT_SSH_COMMAND: 'ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityFile=/dev/null',
    LC_ALL: 'C',
  };
}

const HEX = /^[0-9a-f]{7,40}$/i;

/**
 * Checks out one commit of a repository into `workspace` with a shallow fetch: the head of a
 * branch or ref, or a pinned commit (fetched directly when the server allows it, else found
 * in the branch's full history).
 */
export async function checkout(opts: CheckoutOptions): Promise<CheckoutResult> {
  const { ref, workspace, log } = opts;
  const repository = normalizeRepository(opts.repositoryUrl);
  const shown = redactUrl(opts.repositoryUrl);
  const commit = opts.commit?.toLowerCase() ?? null;
  if (opts.repositoryUrl.startsWith('-') || ref.startsWith('-')) {
    throw new BuildError('The repository URL and the branch must not start with "-".');
  }
  if (commit !== null && !HEX.test(commit)) {
    throw new BuildError(`"${opts.commit}" is not a commit hash (7 to 40 hexadecimal characters).`);
  }

  await mkdir(workspace, { recursive: true });
  await opts.sandbox.prepare([workspace]);
  // Inside .git, which checked-out files can never write to; git needs no real home.
  const env = gitEnv(opts.path ?? process.env.PATH ?? '/usr/bin:/bin', join(workspace, '.git', 'home'));
  const deadline = Date.now() + opts.timeoutMs;
  const secrets = urlSecrets(opts.repositoryUrl);
  const local = localRepositoryPath(repository);

  const git = async (args: string[]) => {
    const output: string[] = [];
    const result = await runCommand({
      argv: ['git', ...args],
      cwd: workspace,
      env,
      timeoutMs: Math.max(1, deadline - Date.now()),
      secrets,
      signal: opts.signal,
      sandbox: opts.sandbox,
      writable: [workspace],
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
    if (memory) failWith(output, `Could not fetch ${shown}: ${memory}`, 'memory');
    return { ok: result.exitCode === 0, output };
  };
  // git's first fatal line says why; "Could not read from remote repository" and the advice
  // after it are the same for every failure.
  const lastLine = (output: string[]) => {
    const lines = output.map((l) => l.trim()).filter((l) => l !== '');
    const fatal = lines.find(
      (l) => /^(fatal|error):/.test(l) && !/Could not read from remote repository/.test(l),
    );
    return (fatal ?? lines.at(-1) ?? 'no output from git').replace(/^(fatal|error): /, '').replace(/\.$/, '');
  };
  const failWith = (output: string[], message: string, limit?: 'memory'): never => {
    for (const line of output) log(line);
    throw new BuildError(message, limit ? { limit } : {});
  };
  const unreachable = (output: string[]) =>
    failWith(
      output,
      `Could not read the repository ${shown}: ${lastLine(output)}. ${opts.unreachableHint ?? 'Check the URL and that the repository is public.'}`,
    );
  const missingRef = (output: string[]) =>
    /couldn't find remote ref|not our ref|unadvertised object/i.test(output.join('\n'));

  const branchRef = ref.startsWith('refs/') ? ref : `refs/heads/${ref}`;
  const refName = ref.startsWith('refs/') ? `Ref "${ref}"` : `Branch "${ref}"`;
  log(
    `Cloning ${shown} (${ref.startsWith('refs/') ? 'ref' : 'branch'}: ${ref}${commit ? `, commit: ${commit}` : ''})`,
  );

  const init = await git(['init', '-q']);
  if (!init.ok)
    failWith(init.output, `Could not create a git repository in the workspace: ${lastLine(init.output)}`);

  let target = 'FETCH_HEAD';
  if (commit === null) {
    const fetched = await git(['fetch', '-q', '--depth=1', '--no-tags', repository, branchRef]);
    if (!fetched.ok) {
      if (!missingRef(fetched.output)) unreachable(fetched.output);
      // A bare name may also be a tag.
      const tag = ref.startsWith('refs/')
        ? null
        : await git(['fetch', '-q', '--depth=1', '--no-tags', repository, `refs/tags/${ref}`]);
      if (!tag?.ok) failWith(fetched.output, `${refName} was not found in ${shown}.`);
    }
  } else {
    // Servers allow fetching a full hash directly (protocol v2); a short one must be looked
    // up in the branch's history.
    const direct =
      commit.length === 40 ? await git(['fetch', '-q', '--depth=1', '--no-tags', repository, commit]) : null;
    if (direct && !direct.ok && !missingRef(direct.output)) unreachable(direct.output);
    if (!direct?.ok) {
      const full = await git(['fetch', '-q', '--no-tags', repository, `+${branchRef}:refs/slipway/source`]);
      if (!full.ok) {
        if (!missingRef(full.output)) unreachable(full.output);
        failWith(
          full.output,
          `${refName} was not found in ${shown}, so commit ${commit} could not be looked up.`,
        );
      }
      const resolved = await git(['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]);
      const hash = resolved.output[0]?.trim();
      if (!resolved.ok || !hash) {
        throw new BuildError(`Commit ${commit} was not found on ${refName.toLowerCase()} of ${shown}.`);
      }
      target = hash;
    }
  }

  const checkedOut = await git(['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', target]);
  if (!checkedOut.ok)
    failWith(checkedOut.output, `Could not check out ${commit ?? ref}: ${lastLine(checkedOut.output)}`);

  const info = await git(['log', '-1', '--format=%H%n%ae%n%B']);
  const [commitHash = '', author = '', ...message] = info.output;
  if (!info.ok || !/^[0-9a-f]{40}$/.test(commitHash)) {
    failWith(info.output, `Could not read the checked-out commit: ${lastLine(info.output)}`);
  }
  const commitMessage = message.join('\n').trim();
  log(`Checked out ${commitHash.slice(0, 7)}: ${commitMessage.split('\n')[0] ?? ''}`);
  return { commitHash, author, commitMessage };
}
