import { z } from 'zod';

// The fields of GitHub's webhook payloads the bot uses, checked at the boundary. Everything else
// in a payload passes through unchecked, so new fields GitHub adds change nothing.

const Account = z.object({
  /** The user's or bot's login. */
  login: z.string(),
  /** `User`, `Bot` or `Organization`. */
  type: z.string().optional(),
});

export const Repository = z.object({
  /** The repository's name. */
  name: z.string(),
  /** `owner/name`. */
  full_name: z.string(),
  /** The owning account. */
  owner: Account,
});
export type Repository = z.infer<typeof Repository>;

export const PullRequest = z.object({
  /** The pull request's number. */
  number: z.number().int().positive(),
  /** Its title. */
  title: z.string(),
  /** Its page on GitHub. */
  html_url: z.string().optional(),
  /** `open` or `closed`. */
  state: z.string(),
  /** True while it is a draft. */
  draft: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
  /** True once merged. */
  merged: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
  /** The merge commit (or the test merge commit while open). */
  merge_commit_sha: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  /** Its labels. */
  labels: z
    .array(z.object({ name: z.string() }))
    .nullish()
    .transform((v) => v ?? []),
  /** The branch and commit it proposes; `repo` is null when the fork was deleted. */
  head: z.object({
    sha: z.string().regex(/^[0-9a-f]{40}$/),
    ref: z.string(),
    repo: z.object({ full_name: z.string() }).nullable(),
  }),
  /** The branch it merges into. */
  base: z.object({ ref: z.string(), repo: z.object({ full_name: z.string() }) }),
});
export type PullRequest = z.infer<typeof PullRequest>;

const Installation = z.object({
  /** The App's installation that sent the event. */
  id: z.number().int(),
});

export const PullRequestEvent = z.object({
  /** opened, synchronize, reopened, ready_for_review, closed, ... */
  action: z.string(),
  /** The pull request as it is after the event. */
  pull_request: PullRequest,
  /** The base repository. */
  repository: Repository,
  /** The App's installation on it. */
  installation: Installation,
  /** Who did it. */
  sender: Account,
  /** The previous head commit (`synchronize` only). */
  before: z.string().optional(),
});
export type PullRequestEvent = z.infer<typeof PullRequestEvent>;

export const IssueCommentEvent = z.object({
  /** created, edited or deleted. */
  action: z.string(),
  /** The issue or pull request commented on. */
  issue: z.object({
    /** The issue's or pull request's number. */
    number: z.number().int().positive(),
    /** Present when the issue is a pull request. */
    pull_request: z.looseObject({}).nullish(),
  }),
  /** The comment: its id, text and author. */
  comment: z.object({ id: z.number().int(), body: z.string(), user: Account }),
  /** The repository. */
  repository: Repository,
  /** The App's installation on it. */
  installation: Installation,
  /** Who commented. */
  sender: Account,
});
export type IssueCommentEvent = z.infer<typeof IssueCommentEvent>;

export const CheckRunEvent = z.object({
  /** created, completed, rerequested or requested_action. */
  action: z.string(),
  /** The check run acted on. */
  check_run: z.object({
    /** Its id. */
    id: z.number().int(),
    /** The check's name; the bot acts only on its own. */
    name: z.string(),
    /** The commit it is on. */
    head_sha: z.string(),
    /** The deployment id, or `pr-<n>` for checks without a deployment. */
    external_id: z.string().nullish(),
    /** Pull requests of the same repository with this head (empty for forks). */
    pull_requests: z
      .array(z.object({ number: z.number().int() }))
      .nullish()
      .transform((v) => v ?? []),
  }),
  /** The button that was clicked (`requested_action` only). */
  requested_action: z.object({ identifier: z.string() }).nullish(),
  /** The repository. */
  repository: Repository,
  /** The App's installation on it. */
  installation: Installation,
  /** Who clicked. */
  sender: Account,
});
export type CheckRunEvent = z.infer<typeof CheckRunEvent>;

/** True when the pull request's head lives in another repository (a fork, or a deleted one). */
export const isFork = (pr: PullRequest): boolean => pr.head.repo?.full_name !== pr.base.repo.full_name;
