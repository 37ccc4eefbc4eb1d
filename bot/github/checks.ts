import { z } from 'zod';
import type { GitHubRepo } from './octokit.ts';

/** The check of a pull request's preview. */
export const PREVIEW_CHECK = 'Slipway Preview';
/** The check of a promotion or production deployment after a merge or `/promote`. */
export const PRODUCTION_CHECK = 'Slipway Production';

/** What a check shows: GitHub renders `summary` and `text` as Markdown. */
export interface CheckOutput {
  title: string;
  summary: string;
  text?: string;
}

export type Conclusion = 'success' | 'failure' | 'neutral' | 'skipped' | 'action_required';

/** A button on a check run; GitHub sends `check_run.requested_action` with its identifier. */
export interface CheckAction {
  label: string;
  description: string;
  identifier: 'approve' | 'redeploy' | 'promote';
}

/** Where a check stands and what it shows. */
export interface CheckState {
  status: 'in_progress' | 'completed';
  conclusion?: Conclusion;
  output: CheckOutput;
  detailsUrl?: string;
  actions?: CheckAction[];
}

export const ACTIONS = {
  approve: {
    label: 'Approve preview',
    description: 'Build a preview of this fork commit',
    identifier: 'approve',
  },
  redeploy: { label: 'Redeploy', description: 'Build this pull request again', identifier: 'redeploy' },
  promote: { label: 'Promote', description: 'Make this preview production', identifier: 'promote' },
} as const satisfies Record<string, CheckAction>;

const CheckRun = z.object({
  id: z.number().int(),
  name: z.string(),
  head_sha: z.string(),
  status: z.string(),
  conclusion: z.string().nullish(),
  external_id: z.string().nullish(),
  html_url: z.string().nullish(),
  output: z.object({ title: z.string().nullish() }).nullish(),
});
export type CheckRun = z.infer<typeof CheckRun>;

/** GitHub caps output texts at 65535 characters. */
const cap = (s: string, max = 60_000) => (s.length > max ? `${s.slice(0, max)}\n…` : s);

function fields(state: CheckState, now: Date) {
  return {
    status: state.status,
    ...(state.status === 'completed'
      ? { conclusion: state.conclusion ?? 'neutral', completed_at: now.toISOString() }
      : {}),
    output: {
      title: state.output.title,
      summary: cap(state.output.summary),
      ...(state.output.text ? { text: cap(state.output.text) } : {}),
    },
    ...(state.detailsUrl ? { details_url: state.detailsUrl } : {}),
    actions: state.actions ?? [],
  };
}

/** The page of a check run on GitHub (the API gives it; the fallback is github.com's form). */
export const checkUrl = (gh: GitHubRepo, run: { id: number; html_url?: string | null | undefined }) =>
  run.html_url ?? `https://github.com/${gh.owner}/${gh.repo}/runs/${run.id}`;

/** Creates a check run on `sha`; returns it with its page's URL. */
export async function createCheck(
  gh: GitHubRepo,
  input: { name: string; sha: string; externalId: string; now: Date } & CheckState,
): Promise<{ id: number; url: string }> {
  const { data } = await gh.octokit.rest.checks.create({
    owner: gh.owner,
    repo: gh.repo,
    name: input.name,
    head_sha: input.sha,
    external_id: input.externalId,
    started_at: input.now.toISOString(),
    ...fields(input, input.now),
  });
  const run = CheckRun.pick({ id: true, html_url: true }).parse(data);
  return { id: run.id, url: checkUrl(gh, run) };
}

export async function updateCheck(gh: GitHubRepo, id: number, state: CheckState, now: Date): Promise<void> {
  await gh.octokit.rest.checks.update({
    owner: gh.owner,
    repo: gh.repo,
    check_run_id: id,
    ...fields(state, now),
  });
}

/** Every run of the check `name` on `sha`, newest first (not only the latest). */
export async function listChecks(gh: GitHubRepo, sha: string, name: string): Promise<CheckRun[]> {
  const runs = await gh.octokit.paginate(gh.octokit.rest.checks.listForRef, {
    owner: gh.owner,
    repo: gh.repo,
    ref: sha,
    check_name: name,
    filter: 'all',
    per_page: 100,
  });
  return z.array(CheckRun).parse(runs);
}

/** A run still waiting for something: not completed, or completed asking for approval. */
export const isOpen = (run: CheckRun) => run.status !== 'completed' || run.conclusion === 'action_required';
