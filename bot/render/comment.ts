import { accessLine } from './access.ts';
import { type CommentState, encodeState } from './comment-state.ts';
import { cell, formatTime, shortSha, STATUS_LABEL } from './format.ts';

/** The hidden first line by which the bot finds its own comment on a pull request. */
export const COMMENT_MARKER = '<!-- slipway-bot:preview -->';

function previewTable(p: NonNullable<CommentState['preview']>, updatedAt: string): string[] {
  const status =
    p.status === 'failed' && p.error ? `${STATUS_LABEL.failed}: ${cell(p.error)}` : STATUS_LABEL[p.status];
  const preview =
    p.status === 'live' && p.url
      ? `[${new URL(p.url).host}](${p.url})`
      : p.status === 'awaiting-approval'
        ? 'Waiting for someone with write access to comment `/preview` or click **Approve preview** on the check'
        : p.status === 'failed'
          ? '—'
          : 'Available once live';
  return [
    '| | |',
    '| :-- | :-- |',
    `| **Commit** | ${shortSha(p.sha)} |`,
    `| **Status** | ${status} |`,
    `| **Preview** | ${preview} |`,
    // The branch's URL serves its newest live preview, so it is worth showing while this one builds.
    ...(p.branchUrl && p.status !== 'failed'
      ? [
          `| **Branch URL** | [${new URL(p.branchUrl).host}](${p.branchUrl}) (always the newest live preview of the branch) |`,
        ]
      : []),
    // How a reviewer gets in, while there is something to see.
    ...(p.protected && p.status !== 'failed'
      ? [`| **Access** | ${accessLine(p.deploymentId, p.protectionUrl)} |`]
      : []),
    ...(p.dashboardUrl
      ? [`| **Logs** | [Build log](${p.dashboardUrl})${p.logsUrl ? ` · [Check run](${p.logsUrl})` : ''} |`]
      : p.logsUrl
        ? [`| **Logs** | [Build details](${p.logsUrl}) |`]
        : []),
    `| **Updated** | ${formatTime(updatedAt)} |`,
  ];
}

function productionLine(prod: NonNullable<CommentState['production']>): string {
  if (prod.how === 'promoted') {
    return `🚀 **Production:** ${prod.by} promoted preview \`${prod.deploymentId}\` (${shortSha(prod.sha)}) to production${prod.url ? `: ${prod.url}` : '.'}`;
  }
  const start = `🚀 **Production:** ${prod.by === 'the merge' ? 'after the merge there was no live preview of the merged commit, so' : `${prod.by} started`} a production deployment of \`${prod.branch}\` (\`${prod.deploymentId}\`)`;
  if (prod.status === 'live') return `${start} is live${prod.url ? `: ${prod.url}` : '.'}`;
  if (prod.status === 'failed') return `${start} failed${prod.error ? `: ${cell(prod.error)}` : '.'}`;
  return `${start} is ${STATUS_LABEL[prod.status].toLowerCase()}.`;
}

/**
 * The one comment the bot keeps on a pull request, rebuilt from its state each time: the
 * preview's commit, status, URL, logs link and update time, then production and closing lines.
 */
export function renderComment(state: CommentState): string {
  const lines = [COMMENT_MARKER, '### Slipway preview', ''];
  if (state.preview) lines.push(...previewTable(state.preview, state.updatedAt), '');
  if (state.production) lines.push(productionLine(state.production), '');
  for (const note of state.notes) lines.push(note, '');
  if (state.closed) {
    lines.push(
      '🔒 This pull request was closed without merging. Its preview is inactive on GitHub; nothing was promoted.',
      '',
    );
  }
  lines.push('<sub>Comment `/slipway help` for commands.</sub>', encodeState(state));
  return lines.join('\n');
}
