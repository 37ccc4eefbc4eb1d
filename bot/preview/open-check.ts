import type { Bot } from '../context.ts';
import {
  type CheckState,
  createCheck,
  isOpen,
  listChecks,
  PREVIEW_CHECK,
  updateCheck,
} from '../github/checks.ts';
import { listPreviewDeployments, setDeploymentStatus } from '../github/deployments.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import type { PullRequest } from '../github/payloads.ts';
import { supersededCheckOutput } from '../render/check.ts';

/** `external_id` of preview checks that have no deployment (skips, approvals, config errors). */
export const pullExternalId = (pull: number) => `pr-${pull}`;

/**
 * Creates the preview check of the pull request's head and ends every older preview check of
 * this pull request that is still open (on the head or on `before`, the previous head) as
 * neutral, "superseded by <sha>", so only the newest preview is ever pending; their GitHub
 * Deployments become inactive.
 */
export async function openPreviewCheck(
  bot: Pick<Bot, 'now'>,
  gh: GitHubRepo,
  pr: PullRequest,
  state: CheckState,
  externalId: string,
  before?: string,
): Promise<{ id: number; url: string }> {
  const sha = pr.head.sha;
  const created = await createCheck(gh, { name: PREVIEW_CHECK, sha, externalId, now: bot.now(), ...state });
  const shas = [...new Set([sha, before].filter((s): s is string => Boolean(s && /^[0-9a-f]{40}$/.test(s))))];
  const superseded = new Set<string>();
  for (const at of shas) {
    for (const run of await listChecks(gh, at, PREVIEW_CHECK)) {
      if (run.id === created.id || !isOpen(run)) continue;
      await updateCheck(
        gh,
        run.id,
        { status: 'completed', conclusion: 'neutral', output: supersededCheckOutput(sha) },
        bot.now(),
      );
      if (run.external_id?.startsWith('dpl_')) superseded.add(run.external_id);
    }
  }
  if (superseded.size > 0) {
    for (const d of await listPreviewDeployments(gh, pr.number)) {
      if (!d.slipwayDeploymentId || !superseded.has(d.slipwayDeploymentId)) continue;
      await setDeploymentStatus(gh, d.id, {
        state: 'inactive',
        description: `Superseded by ${sha.slice(0, 7)}`,
      });
    }
  }
  return created;
}
