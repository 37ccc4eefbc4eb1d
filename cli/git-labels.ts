import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { BranchName } from '../api/schemas/projects.ts';

const run = promisify(execFile);

/** What a deployment of a folder is labelled with when the folder is a git checkout. */
export interface GitLabels {
  branch?: string;
  /** Only for a clean tree: otherwise the files are not that commit's. */
  commitHash?: string;
}

/** The checkout's branch and (clean) commit; nothing when git or a checkout is missing. */
export async function gitLabels(dir: string): Promise<GitLabels> {
  const git = (...args: string[]) =>
    run('git', ['-C', dir, ...args], { timeout: 10_000 }).then(
      (r) => r.stdout.trim(),
      () => null,
    );
  const [branch, commit, status] = await Promise.all([
    git('rev-parse', '--abbrev-ref', 'HEAD'),
    git('rev-parse', 'HEAD'),
    git('status', '--porcelain', '--untracked-files=no'),
  ]);
  const labels: GitLabels = {};
  if (branch && branch !== 'HEAD' && BranchName.safeParse(branch).success) labels.branch = branch;
  if (commit && status === '' && /^[0-9a-f]{40}$/.test(commit)) labels.commitHash = commit;
  return labels;
}
