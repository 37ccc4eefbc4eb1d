import { z } from 'zod';
import { type CommentState, decodeState } from '../render/comment-state.ts';
import { COMMENT_MARKER, renderComment } from '../render/comment.ts';
import type { GitHubRepo } from './octokit.ts';

const IssueComment = z.object({
  id: z.number().int(),
  body: z.string().nullish(),
  user: z.object({ type: z.string().optional() }).nullish(),
});

/** The bot's comment on a pull request: its id and the state it shows. */
export interface StickyComment {
  id: number;
  state: CommentState | null;
}

/** Finds the bot's comment by its hidden marker (only on comments written by a bot account). */
export async function findSticky(gh: GitHubRepo, pull: number): Promise<StickyComment | null> {
  const comments = z.array(IssueComment).parse(
    await gh.octokit.paginate(gh.octokit.rest.issues.listComments, {
      owner: gh.owner,
      repo: gh.repo,
      issue_number: pull,
      per_page: 100,
    }),
  );
  const mine = comments.find((c) => c.user?.type === 'Bot' && c.body?.startsWith(COMMENT_MARKER));
  return mine ? { id: mine.id, state: decodeState(mine.body ?? '') } : null;
}

/** Writes the comment: in place when it exists, else as a new comment. */
export async function writeSticky(
  gh: GitHubRepo,
  pull: number,
  existing: StickyComment | null,
  state: CommentState,
): Promise<void> {
  const body = renderComment(state);
  if (existing) {
    await gh.octokit.rest.issues.updateComment({
      owner: gh.owner,
      repo: gh.repo,
      comment_id: existing.id,
      body,
    });
  } else {
    await gh.octokit.rest.issues.createComment({ owner: gh.owner, repo: gh.repo, issue_number: pull, body });
  }
}

/** A separate comment answering a command. */
export async function reply(gh: GitHubRepo, pull: number, body: string): Promise<void> {
  await gh.octokit.rest.issues.createComment({ owner: gh.owner, repo: gh.repo, issue_number: pull, body });
}
