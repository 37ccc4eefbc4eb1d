import type { Deployment } from '../api/schemas/deployments.ts';
import type { Project } from '../api/schemas/projects.ts';
import type { Octokit, Repo } from './github.ts';
import type { Command } from './inputs.ts';
import { cell, fenced, link, shortCommit, statusLabel, table } from './render.ts';

/** The hidden line that finds the step's comment again: one comment per project on a PR. */
export const commentMarker = (projectId: string) => `<!-- slipway:action:${projectId} -->`;

/** What the comment shows. */
export interface CommentView {
  command: Command;
  project: Project;
  deployment: Deployment;
  /** Still waiting: the status shown is the one at the start. */
  pending: boolean;
  timedOut: boolean;
  productionUrl: string | null;
  failure: string | null;
  logUrl: string | null;
  /** When this version of the comment was written. */
  at: Date;
}

const HEADLINE: Record<Command, string> = {
  deploy: 'deployment',
  promote: 'promotion to production',
  rollback: 'rollback of production',
};

/** The comment's markdown, starting with its marker. */
export function renderComment(v: CommentView): string {
  const d = v.deployment;
  const status = v.pending ? `${statusLabel(d.status)}…` : statusLabel(d.status, v.timedOut);
  const urlTitle = d.target === 'production' ? 'Production' : 'Preview';
  const url = d.target === 'production' ? (v.productionUrl ?? d.url) : d.url;
  const lines = [
    commentMarker(v.project.id),
    `### Slipway ${HEADLINE[v.command]}: \`${cell(v.project.name)}\``,
    '',
    table(
      ['Status', urlTitle, 'Commit', 'Deployment'],
      [[status, d.status === 'live' ? link(url) : '–', shortCommit(d.commitHash), `\`${d.id}\``]],
    ),
  ];
  // The branch's URL serves its newest live preview: shown from the start, as one may be live.
  if (d.branchUrl)
    lines.push('', `Branch URL: ${link(d.branchUrl)} (always the newest live preview of the branch)`);
  if (v.failure)
    lines.push(
      '',
      '<details><summary>Why it failed</summary>',
      '',
      fenced(v.failure.split('\n')),
      '',
      '</details>',
    );
  const footer = [v.logUrl ? link(v.logUrl, 'Workflow run') : null, `updated ${v.at.toISOString()}`].filter(
    Boolean,
  );
  lines.push('', `<sub>${footer.join(' · ')}</sub>`);
  return `${lines.join('\n')}\n`;
}

/**
 * Writes the step's comment on a pull request: edits the one carrying `marker` (found by
 * reading the PR's comments, or `knownId` from earlier in this step), else creates it. Answers
 * the comment's id.
 */
export async function upsertComment(
  octokit: Octokit,
  repo: Repo,
  issueNumber: number,
  marker: string,
  body: string,
  knownId?: number,
): Promise<number> {
  let id = knownId;
  if (id === undefined) {
    const comments = await octokit.paginate(octokit.rest.issues.listComments, {
      ...repo,
      issue_number: issueNumber,
      per_page: 100,
    });
    id = comments.find((c) => c.body?.includes(marker))?.id;
  }
  if (id !== undefined) {
    await octokit.rest.issues.updateComment({ ...repo, comment_id: id, body });
    return id;
  }
  const created = await octokit.rest.issues.createComment({ ...repo, issue_number: issueNumber, body });
  return created.data.id;
}
