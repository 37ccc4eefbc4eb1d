import type { CommentMode } from '../config.ts';
import type { Bot } from '../context.ts';
import { findSticky, writeSticky } from '../github/comments.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import { type CommentState, emptyState } from '../render/comment-state.ts';

const failed = (s: CommentState) => s.preview?.status === 'failed' || s.production?.status === 'failed';

const sameContent = (a: CommentState, b: CommentState) =>
  JSON.stringify({ ...a, updatedAt: '' }) === JSON.stringify({ ...b, updatedAt: '' });

/**
 * Applies `change` to the state of the pull request's comment and writes the comment when
 * something changed. `mode` decides whether a comment may be created: `always`, `failures` (only
 * once something failed) or `off` (never; nothing is written). An existing comment is always kept
 * up to date. `change` returns null to leave the comment alone.
 */
export async function updateComment(
  bot: Pick<Bot, 'now'>,
  gh: GitHubRepo,
  pull: number,
  mode: CommentMode,
  change: (state: CommentState) => CommentState | null,
): Promise<void> {
  if (mode === 'off') return;
  const existing = await findSticky(gh, pull);
  const before = existing?.state ?? emptyState(bot.now());
  const next = change(before);
  if (!next) return;
  if (existing?.state && sameContent(before, next)) return;
  if (!existing && mode === 'failures' && !failed(next)) return;
  await writeSticky(gh, pull, existing, { ...next, updatedAt: bot.now().toISOString() });
}
