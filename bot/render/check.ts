import type { Deployment } from '../../api/schemas/deployments.ts';
import type { CheckOutput } from '../github/checks.ts';
import { accessLine, accessOf } from './access.ts';
import { formatDuration, shortSha } from './format.ts';

const STAGE: Record<'queued' | 'building' | 'deploying', { title: string; doing: string }> = {
  queued: { title: 'Preview queued', doing: 'is queued' },
  building: { title: 'Building the preview', doing: 'is building' },
  deploying: { title: 'Deploying the preview', doing: 'is built and going live' },
};

function facts(d: Deployment): string {
  return [
    '| Deployment | Commit | Branch | Build | Deploy |',
    '| :-- | :-- | :-- | :-- | :-- |',
    `| \`${d.id}\` | ${shortSha(d.commitHash)} | \`${d.branch}\` | ${formatDuration(d.buildDurationMs)} | ${formatDuration(d.deployDurationMs)} |`,
  ].join('\n');
}

/** The branch URL's line under the preview's own URL, when the deployment has one. */
const branchLine = (d: Deployment) =>
  d.branchUrl ? `\n\n**Branch URL:** ${d.branchUrl} (always the newest live preview of \`${d.branch}\`)` : '';

/** How a reviewer gets into a protected preview, under its URLs (nothing when it is not protected). */
const accessBlock = (d: Deployment) => {
  const access = accessOf(d);
  return access.protected ? `\n\n${accessLine(d.id, access.protectionUrl)}` : '';
};

/** The tail of a build log as a fenced block that no line of the log can close early. */
export function logBlock(log: string): string {
  const fence = '`'.repeat(Math.max(3, ...[...log.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${fence}text\n${log.trimEnd()}\n${fence}`;
}

/** Output of the preview check for a deployment's current state; `logTail` for failures. */
export function previewCheckOutput(d: Deployment, logTail?: string): CheckOutput {
  if (d.status === 'live') {
    return {
      title: 'Preview is live',
      summary: `**Preview:** ${d.url}${branchLine(d)}${accessBlock(d)}\n\n${facts(d)}\n\nClick **Promote** to make this preview production, or **Redeploy** to build it again.`,
    };
  }
  if (d.status === 'failed') {
    return {
      title: 'Preview failed',
      summary: `The preview of ${shortSha(d.commitHash)} failed: ${d.errorMessage ?? 'no reason given'}\n\n${facts(d)}\n\nFix the build and push, or click **Redeploy** (or comment \`/preview\`) to try again.`,
      ...(logTail ? { text: `Last lines of the build log:\n\n${logBlock(logTail)}` } : {}),
    };
  }
  const stage = STAGE[d.status];
  return {
    title: stage.title,
    summary: `Deployment \`${d.id}\` of ${shortSha(d.commitHash)} ${stage.doing}. This check is updated when it is live or has failed.\n\n${facts(d)}`,
  };
}

/** Output of the production check: a promotion (`promoted`) or a production deployment after a merge. */
export function productionCheckOutput(
  d: Deployment,
  how: 'promoted' | 'deployed',
  productionUrl: string | null,
  logTail?: string,
): CheckOutput {
  if (how === 'promoted') {
    return {
      title: 'Promoted to production',
      summary: `Preview \`${d.id}\` of ${shortSha(d.commitHash)} is now production, without a rebuild${productionUrl ? `: ${productionUrl}` : '.'}\n\nIt keeps the environment variables it was built with (the preview ones).`,
    };
  }
  if (d.status === 'live') {
    return {
      title: 'Production is live',
      summary: `Production deployment \`${d.id}\` of \`${d.branch}\` (${shortSha(d.commitHash)}) is live${productionUrl ? `: ${productionUrl}` : '.'}\n\n${facts(d)}`,
    };
  }
  if (d.status === 'failed') {
    return {
      title: 'Production deployment failed',
      summary: `Production deployment \`${d.id}\` of \`${d.branch}\` failed: ${d.errorMessage ?? 'no reason given'}. Production still serves the previous deployment.\n\n${facts(d)}`,
      ...(logTail ? { text: `Last lines of the build log:\n\n${logBlock(logTail)}` } : {}),
    };
  }
  return {
    title: 'Deploying to production',
    summary: `There was no live preview of the merged commit, so a production deployment of \`${d.branch}\` started: \`${d.id}\` ${STAGE[d.status].doing}.\n\n${facts(d)}`,
  };
}

export const skippedCheckOutput = (reason: string): CheckOutput => ({
  title: 'Preview skipped',
  summary: reason,
});

export const approvalCheckOutput = (sha: string): CheckOutput => ({
  title: 'Waiting for approval',
  summary: `This pull request comes from a fork, so its code is not built until someone with write access approves commit ${shortSha(sha)}: click **Approve preview** above or comment \`/preview\`. Review the changes first: the build runs them. Fork previews only ever get the project's \`preview\` environment variables. Each new commit needs a new approval.`,
});

export const supersededCheckOutput = (sha: string): CheckOutput => ({
  title: `Superseded by ${sha.slice(0, 7)}`,
  summary: `A newer preview (commit ${shortSha(sha)}) replaced this one.`,
});

export const closedCheckOutput = (): CheckOutput => ({
  title: 'Pull request closed',
  summary: 'The pull request was closed before the preview finished.',
});

export const configErrorCheckOutput = (message: string): CheckOutput => ({
  title: 'Invalid .github/slipway.yml',
  summary: `${message}\n\nFix the file on the default branch; previews start again with the next push or \`/preview\`.`,
});

export const startErrorCheckOutput = (message: string): CheckOutput => ({
  title: 'Could not start the preview',
  summary: `Slipway refused the preview: ${message}\n\nComment \`/preview\` to try again once it is fixed.`,
});
