import { z } from 'zod';
import { type GitHubRepo, statusOf } from './octokit.ts';

const Permission = z.object({ permission: z.string() });

/**
 * True when `username` may push to the repository (write, maintain or admin): the people who
 * may build, promote and roll back from a pull request.
 */
export async function hasWriteAccess(gh: GitHubRepo, username: string): Promise<boolean> {
  try {
    const { data } = await gh.octokit.rest.repos.getCollaboratorPermissionLevel({
      owner: gh.owner,
      repo: gh.repo,
      username,
    });
    // `permission` folds maintain into write and triage into read.
    return ['admin', 'write'].includes(Permission.parse(data).permission);
  } catch (err) {
    if (statusOf(err) === 404) return false;
    throw err;
  }
}
