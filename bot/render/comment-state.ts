import { z } from 'zod';
import { DeploymentStatus } from '../../api/schemas/deployments.ts';

/** Where a pull request's preview stands, as the comment shows it. */
export const PreviewStatus = z.enum(['awaiting-approval', ...DeploymentStatus.options]);
export type PreviewStatus = z.infer<typeof PreviewStatus>;

/**
 * What the sticky comment shows. It is kept inside the comment itself (a hidden, encoded line),
 * so the bot needs no database and any bot process can update the comment.
 */
export const CommentState = z.object({
  /** The preview the comment is about: the latest one started for the pull request. */
  preview: z
    .object({
      /** The Slipway deployment; null while a fork's preview waits for approval. */
      deploymentId: z.string().nullable(),
      /** The head commit it builds. */
      sha: z.string(),
      /** Waiting for approval, or the deployment's status. */
      status: PreviewStatus,
      /** The deployment's own URL. */
      url: z.string().nullable(),
      /**
       * The branch's URL, which serves its newest live preview (docs/edge.md#branch-urls); absent
       * in older comments and from servers before branch URLs.
       */
      branchUrl: z.string().nullable().optional(),
      /** The check run's page, which holds the log tail. */
      logsUrl: z.string().nullable(),
      /** The deployment's page in Slipway's dashboard (its whole log, live); absent in older comments. */
      dashboardUrl: z.string().nullable().optional(),
      /** Why it failed. */
      error: z.string().nullable(),
      /**
       * Its URLs need a sign-in, a share link or the bypass secret (docs/protection.md); absent in
       * older comments and from servers before protection.
       */
      protected: z.boolean().optional(),
      /** The project's Protection tab in the dashboard, where admins make share links. */
      protectionUrl: z.string().nullable().optional(),
    })
    .nullable(),
  /** What reached production from this pull request: a promotion, or a deployment after the merge. */
  production: z
    .object({
      /** The production deployment. */
      deploymentId: z.string(),
      /** `promoted`: a live preview became production; `deployed`: a new production build. */
      how: z.enum(['promoted', 'deployed']),
      /** Who or what did it: `the merge` or `@login`. */
      by: z.string(),
      /** The commit it serves, once known. */
      sha: z.string().nullable(),
      /** The branch it was built from. */
      branch: z.string(),
      /** The deployment's status. */
      status: DeploymentStatus,
      /** The production URL once live. */
      url: z.string().nullable(),
      /** Why it failed. */
      error: z.string().nullable(),
    })
    .nullable(),
  /** Other lines worth keeping (a merge into a non-production branch, a rollback). */
  notes: z.array(z.string()),
  /** Closed without merging. */
  closed: z.boolean(),
  /** When the bot last changed the comment. */
  updatedAt: z.string(),
});
export type CommentState = z.infer<typeof CommentState>;

export const emptyState = (now: Date): CommentState => ({
  preview: null,
  production: null,
  notes: [],
  closed: false,
  updatedAt: now.toISOString(),
});

const STATE_PREFIX = '<!-- slipway-bot:state ';

/** The hidden line that carries the state; base64url, so nothing in it can end the HTML comment. */
export const encodeState = (state: CommentState) =>
  `${STATE_PREFIX}${Buffer.from(JSON.stringify(state)).toString('base64url')} -->`;

/** The state in a comment body, or null when there is none or it does not parse. */
export function decodeState(body: string): CommentState | null {
  const start = body.lastIndexOf(STATE_PREFIX);
  if (start === -1) return null;
  const end = body.indexOf(' -->', start);
  if (end === -1) return null;
  try {
    const json: unknown = JSON.parse(
      Buffer.from(body.slice(start + STATE_PREFIX.length, end), 'base64url').toString('utf8'),
    );
    const parsed = CommentState.safeParse(json);
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
