import { BuildError } from '../../../platform/sandbox/build-error.ts';
import { failWith, missingRef, runGit, unreachable } from './git.ts';
import type { GitSession } from './types.ts';

const branchRefOf = (ref: string) => (ref.startsWith('refs/') ? ref : `refs/heads/${ref}`);
const refNameOf = (ref: string) => (ref.startsWith('refs/') ? `Ref "${ref}"` : `Branch "${ref}"`);

/** Fetches the head of the branch or ref (or a tag of that name); it is then FETCH_HEAD. */
export async function fetchHead(s: GitSession): Promise<void> {
  const { repository, opts } = s;
  const ref = opts.ref;
  const fetched = await runGit(s, ['fetch', '-q', '--depth=1', '--no-tags', repository, branchRefOf(ref)]);
  if (fetched.ok) return;
  if (!missingRef(fetched.output)) unreachable(s, fetched.output);
  // A bare name may also be a tag.
  const tag = ref.startsWith('refs/')
    ? null
    : await runGit(s, ['fetch', '-q', '--depth=1', '--no-tags', repository, `refs/tags/${ref}`]);
  if (!tag?.ok) failWith(s, fetched.output, `${refNameOf(ref)} was not found in ${s.shown}.`);
}

/** Fetches the pinned commit; answers what to check out (FETCH_HEAD, or the commit's full hash). */
export async function fetchCommit(s: GitSession, commit: string): Promise<string> {
  const { repository, shown } = s;
  const branchRef = branchRefOf(s.opts.ref);
  const refName = refNameOf(s.opts.ref);
  // Servers allow fetching a full hash directly (protocol v2); a short one must be looked up in
  // the branch's history.
  const direct =
    commit.length === 40
      ? await runGit(s, ['fetch', '-q', '--depth=1', '--no-tags', repository, commit])
      : null;
  if (direct && !direct.ok && !missingRef(direct.output)) unreachable(s, direct.output);
  if (direct?.ok) return 'FETCH_HEAD';
  const full = await runGit(s, ['fetch', '-q', '--no-tags', repository, `+${branchRef}:refs/slipway/source`]);
  if (!full.ok) {
    if (!missingRef(full.output)) unreachable(s, full.output);
    failWith(
      s,
      full.output,
      `${refName} was not found in ${shown}, so commit ${commit} could not be looked up.`,
    );
  }
  const resolved = await runGit(s, ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]);
  const hash = resolved.output[0]?.trim();
  if (!resolved.ok || !hash) {
    throw new BuildError(`Commit ${commit} was not found on ${refName.toLowerCase()} of ${shown}.`);
  }
  return hash;
}
