import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { redactUrl } from '../../core/redact-url.ts';
import { SANDBOX_GITCONFIG } from '../../platform/sandbox/spawn.ts';
import { BuildError } from '../../platform/sandbox/build-error.ts';
import { parseRepositoryUrl } from '../github/index.ts';
import { fetchCommit, fetchHead } from './checkout/fetch.ts';
import { failWith, lastLine, runGit } from './checkout/git.ts';
import type { CheckoutOptions, CheckoutResult, GitSession } from './checkout/types.ts';

export type { CheckoutOptions, CheckoutResult } from './checkout/types.ts';

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
 * in the branch's full history). The steps are in `checkout/`, each taking the one GitSession
 * made here.
 */
export async function checkout(opts: CheckoutOptions): Promise<CheckoutResult> {
  const { ref, workspace, log } = opts;
  const commit = opts.commit?.toLowerCase() ?? null;
  if (opts.repositoryUrl.startsWith('-') || ref.startsWith('-')) {
    throw new BuildError('The repository URL and the branch must not start with "-".');
  }
  if (commit !== null && !HEX.test(commit)) {
    throw new BuildError(`"${opts.commit}" is not a commit hash (7 to 40 hexadecimal characters).`);
  }

  await mkdir(workspace, { recursive: true });
  await opts.sandbox.prepare([workspace]);
  const s = startSession(opts);
  log(
    `Cloning ${s.shown} (${ref.startsWith('refs/') ? 'ref' : 'branch'}: ${ref}${commit ? `, commit: ${commit}` : ''})`,
  );

  const init = await runGit(s, ['init', '-q']);
  if (!init.ok)
    failWith(s, init.output, `Could not create a git repository in the workspace: ${lastLine(init.output)}`);

  let target = 'FETCH_HEAD';
  if (commit === null) await fetchHead(s);
  else target = await fetchCommit(s, commit);

  const checkedOut = await runGit(s, [
    '-c',
    'advice.detachedHead=false',
    'checkout',
    '-q',
    '--detach',
    target,
  ]);
  if (!checkedOut.ok)
    failWith(s, checkedOut.output, `Could not check out ${commit ?? ref}: ${lastLine(checkedOut.output)}`);
  return readCommit(s);
}

function startSession(opts: CheckoutOptions): GitSession {
  const repository = normalizeRepository(opts.repositoryUrl);
  return {
    opts,
    repository,
    shown: redactUrl(opts.repositoryUrl),
    // Inside .git, which checked-out files can never write to; git needs no real home.
    env: gitEnv(opts.path ?? process.env.PATH ?? '/usr/bin:/bin', join(opts.workspace, '.git', 'home')),
    deadline: Date.now() + opts.timeoutMs,
    secrets: urlSecrets(opts.repositoryUrl),
    local: localRepositoryPath(repository),
  };
}

/** The checked-out commit's hash, author and message. */
async function readCommit(s: GitSession): Promise<CheckoutResult> {
  const info = await runGit(s, ['log', '-1', '--format=%H%n%ae%n%B']);
  const [commitHash = '', author = '', ...message] = info.output;
  if (!info.ok || !/^[0-9a-f]{40}$/.test(commitHash)) {
    failWith(s, info.output, `Could not read the checked-out commit: ${lastLine(info.output)}`);
  }
  const commitMessage = message.join('\n').trim();
  s.opts.log(`Checked out ${commitHash.slice(0, 7)}: ${commitMessage.split('\n')[0] ?? ''}`);
  return { commitHash, author, commitMessage };
}
