import { z } from 'zod';
import type { GitHubRepo } from './octokit.ts';
import { PullRequest } from './payloads.ts';

/** A pull request as it is now (commands and buttons act on the current head). */
export async function getPull(gh: GitHubRepo, pull: number): Promise<PullRequest> {
  const { data } = await gh.octokit.rest.pulls.get({ owner: gh.owner, repo: gh.repo, pull_number: pull });
  return PullRequest.parse(data);
}

const ChangedFile = z.object({ filename: z.string(), previous_filename: z.string().nullish() });

/** Paths the pull request changes, including the old path of a renamed file. */
export async function changedFiles(gh: GitHubRepo, pull: number): Promise<string[]> {
  const files = await gh.octokit.paginate(gh.octokit.rest.pulls.listFiles, {
    owner: gh.owner,
    repo: gh.repo,
    pull_number: pull,
    per_page: 100,
  });
  return z
    .array(ChangedFile)
    .parse(files)
    .flatMap((f) => (f.previous_filename ? [f.filename, f.previous_filename] : [f.filename]));
}

const GitCommit = z.object({ message: z.string() });

/** The message of a commit (forks' commits are readable through the base repository). */
export async function commitMessage(gh: GitHubRepo, sha: string): Promise<string> {
  const { data } = await gh.octokit.rest.git.getCommit({ owner: gh.owner, repo: gh.repo, commit_sha: sha });
  return GitCommit.parse(data).message;
}
