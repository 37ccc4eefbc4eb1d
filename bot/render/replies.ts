import type { Deployment } from '../../api/schemas/deployments.ts';
import type { Command } from '../lib/parse-command.ts';
import { shortSha } from './format.ts';

/** The answer to `/slipway help`. */
export const helpReply = () =>
  [
    '**Slipway commands** (people with write access to the repository):',
    '',
    '| Command | What it does |',
    '| :-- | :-- |',
    "| `/preview` | Builds a preview of the head commit now, whatever the draft, label, path and `[skip ...]` rules say; approves a fork's commit. |",
    '| `/promote` | Makes the live preview of the head commit production, without a rebuild. |',
    '| `/rollback` | Rolls production back to the deployment that was live before the current one; `/rollback dpl_...` to that earlier production deployment. |',
    '| `/slipway help` | Shows this list (anyone). |',
    '',
    'The **Slipway Preview** check also has buttons: **Redeploy**, **Promote**, and **Approve preview** for forks.',
    'Settings live in `.github/slipway.yml` on the default branch.',
  ].join('\n');

export const deniedReply = (login: string, command: Command | 'button', repo: string) =>
  `@${login} only people with write access to \`${repo}\` can ${command === 'button' ? 'use the Slipway buttons' : `use \`/${command}\``}. Ask a maintainer.`;

export const noConfigReply = () =>
  'This repository has no `.github/slipway.yml` on its default branch, so Slipway does nothing here yet. See `/slipway help`.';

export const invalidConfigReply = (message: string) => `Slipway cannot act: ${message}`;

export const previewRefusedReply = (reason: string) => `No preview: ${reason}`;

export const startFailedReply = (message: string) => `Slipway could not start the preview: ${message}`;

export const promotedReply = (d: Deployment, productionUrl: string | null) =>
  `🚀 Promoted preview \`${d.id}\` (${shortSha(d.commitHash)}) to production${productionUrl ? `: ${productionUrl}` : '.'}`;

export const nothingToPromoteReply = (sha: string) =>
  `There is no live preview of ${shortSha(sha)} to promote yet. Wait for the **Slipway Preview** check to pass, or comment \`/preview\`.`;

export const rollbackReply = (from: string, d: Deployment) =>
  `⏪ Rolling production back from \`${from}\`: deployment \`${d.id}\` (${shortSha(d.commitHash)}) reuses the earlier build and goes live in a few seconds.`;

export const nothingToRollBackReply = () => 'There is no production deployment to roll back from.';

export const commandFailedReply = (command: Command, message: string) => `\`/${command}\` failed: ${message}`;

export const staleApprovalReply = (login: string, sha: string) =>
  `@${login} this pull request has new commits since ${shortSha(sha)}: approve the newest **Slipway Preview** check, or comment \`/preview\`.`;
