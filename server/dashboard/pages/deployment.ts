import type { Deployment, LogType } from '../../../api/schemas/deployments.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import type { Role } from '../../../api/schemas/organizations.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { ansiToHtml } from '../ansi.ts';
import { html, raw } from '../html.ts';
import { age, duration, errorBox, layout, notice, originBadge, statusBadge, type View } from '../layout.ts';

export type Action = 'promote' | 'rollback' | 'redeploy';

export interface DeploymentPageData {
  deployment: Deployment;
  project: Project;
  orgName: string;
  role: Role;
  log: { type: LogType; lines: { id: number; line: string }[]; first: number; total: number };
  message?: string | undefined;
  now: Date;
}

const FINAL = new Set(['live', 'failed']);

/** What the caller may do with this deployment, as the API would allow it (the API decides anyway). */
export function actionsFor(d: Deployment, project: Project, role: Role): Action[] {
  if (!roleAtLeast(role, 'developer') || project.status !== 'active') return [];
  const out: Action[] = [];
  const isProduction = d.id === project.productionDeploymentId;
  if (d.status === 'live' && !isProduction) out.push(d.target === 'production' ? 'rollback' : 'promote');
  if (d.status === 'live' && isProduction) out.push('rollback');
  if (d.source !== 'upload' && d.source !== 'prebuilt') out.push('redeploy');
  return out;
}

export const ACTION_LABEL: Record<Action, (d: Deployment, p: Project) => string> = {
  promote: () => 'Promote to production',
  rollback: (d, p) =>
    d.id === p.productionDeploymentId
      ? 'Roll back to the previous deployment'
      : 'Roll back to this deployment',
  redeploy: () => 'Redeploy',
};

function gitHubCommitUrl(repositoryUrl: string, sha: string): string | null {
  const m = /^(?:https:\/\/github\.com\/|git@github\.com:)([\w.-]+\/[\w.-]+?)(?:\.git)?\/?$/.exec(
    repositoryUrl,
  );
  return m ? `https://github.com/${m[1]}/commit/${sha}` : null;
}

export function deploymentPage(view: View, data: DeploymentPageData) {
  const { base } = view;
  const { deployment: d, project, log, now } = data;
  const path = `${base}/deployments/${d.id}`;
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return layout(view, {
    title: `${d.id} · ${project.name}`,
    crumbs: [
      { label: 'Projects', href: `${base}/` },
      { label: data.orgName, href: `${base}/orgs/${data.orgName}` },
      { label: project.name, href: `${base}/projects/${project.id}` },
      { label: d.id },
    ],
    body: html`${heading(d, project, path)}
      ${notice(data.message)} ${d.errorMessage ? errorBox(d.errorMessage) : ''}
      ${FINAL.has(d.status) ? '' : asLoaded(path)}
      ${actionList(d, project, actionsFor(d, project, data.role), path)}
      ${facts(base, d, project, now)}
      ${logSection(d, log, path)}`,
  });
}

/** The deployment's id, its status (polled while it changes), and whether it serves production. */
function heading(d: Deployment, project: Project, path: string) {
  // prettier-ignore
  return html`<h1>
        Deployment <code>${d.id}</code>
        <span
          id="status"
          aria-live="polite"
          ${FINAL.has(d.status) ? '' : html` data-live-status="${path}/status"`}
          >${statusBadge(d.status)}</span
        >${d.id === project.productionDeploymentId ? html` <span class="badge prod">production</span>` : ''}${originBadge(d)}
      </h1>`;
}

/** Without script, the page does not follow a deployment on its way: it says so. */
function asLoaded(path: string) {
  // prettier-ignore
  return html`<noscript
              ><p class="muted">
                This page shows the deployment as it was when loaded: <a href="${path}">reload</a> to see how
                it goes on.
              </p></noscript
            >`;
}

/** Links to what the caller may do with the deployment (each asks to confirm). */
function actionList(d: Deployment, project: Project, actions: Action[], path: string) {
  // prettier-ignore
  return actions.length > 0 &&
        html`<ul class="actions">
          ${actions.map(
            (a) =>
              html`<li>
                <a class="button${a === 'promote' ? ' primary' : ''}" href="${path}/${a}"
                  >${ACTION_LABEL[a](d, project)}</a
                >
              </li>`,
          )}
        </ul>`;
}

/** What the deployment is: its URLs, what it was built from, by whom, when, how long it took. */
function facts(base: string, d: Deployment, project: Project, now: Date) {
  // prettier-ignore
  return html`<dl class="facts">
        <dt>URL</dt>
        <dd>
          ${d.status === 'live' ? html`<a href="${d.url}">${d.url}</a>` : html`<span class="muted">${d.url} (once live)</span>`}
        </dd>
        ${
          d.branchUrl
            ? html`<dt>Branch URL</dt>
                <dd>
                  <a href="${d.branchUrl}">${d.branchUrl}</a>
                  <span class="muted">the newest live preview of ${d.branch}</span>
                </dd>`
            : ''
        }
        <dt>Target</dt>
        <dd>${d.target}</dd>
        <dt>Branch</dt>
        <dd>${d.branch}</dd>
        <dt>Commit</dt>
        <dd>
          ${commit(d, project)}
        </dd>
        <dt>Author</dt>
        <dd>${d.author ?? '—'}</dd>
        ${
          d.message
            ? html`<dt>Message</dt>
                <dd>${d.message}</dd>`
            : ''
        }
        <dt>Created</dt>
        <dd>${age(d.createdAt, now)}</dd>
        <dt>Build</dt>
        <dd>${duration(d.buildDurationMs)}</dd>
        <dt>Deploy</dt>
        <dd>${duration(d.deployDurationMs)}</dd>
        ${
          d.framework
            ? html`<dt>Framework</dt>
                <dd>${d.framework}</dd>`
            : ''
        }
        ${rollbackFacts(base, d)}
      </dl>`;
}

/** The commit built, linked to GitHub when the repository is there, with its message. */
function commit(d: Deployment, project: Project) {
  const commitUrl =
    d.commitHash && project.repositoryUrl ? gitHubCommitUrl(project.repositoryUrl, d.commitHash) : null;
  // prettier-ignore
  return d.commitHash
              ? html`${commitUrl ? html`<a href="${commitUrl}"><code>${d.commitHash.slice(0, 12)}</code></a>` : html`<code>${d.commitHash.slice(0, 12)}</code>`}
                ${d.commitMessage ?? ''}`
              : html`<span class="muted">not checked out yet</span>`;
}

/** For a rollback: whose build it serves and which deployment it rolled back from. */
function rollbackFacts(base: string, d: Deployment) {
  // prettier-ignore
  return html`${
          d.rollbackTo
            ? html`<dt>Serves the build of</dt>
                <dd><a href="${base}/deployments/${d.rollbackTo}">${d.rollbackTo}</a></dd>`
            : ''
        }
        ${
          d.rollbackFrom
            ? html`<dt>Rolled back from</dt>
                <dd><a href="${base}/deployments/${d.rollbackFrom}">${d.rollbackFrom}</a></dd>`
            : ''
        }`;
}

/** The build or runtime log: its last lines, followed live while the build runs, and a download. */
function logSection(d: Deployment, log: DeploymentPageData['log'], path: string) {
  const streaming = !FINAL.has(d.status) && log.type === 'build';
  const lastId = log.lines.at(-1)?.id ?? 0;
  // prettier-ignore
  return html`<h2 id="log-heading">Logs</h2>
      <nav class="tabs" aria-label="Logs">
        ${(['build', 'runtime'] as const).map((t) =>
          t === log.type
            ? html`<span aria-current="page">${t === 'build' ? 'Build log' : 'Runtime log'}</span>`
            : html`<a href="${path}?log=${t}#log-heading">${t === 'build' ? 'Build log' : 'Runtime log'}</a>`,
        )}
        <a href="${path}/log.txt?type=${log.type}" class="muted">Download</a>
      </nav>
      ${log.first > 1 ? html`<p class="muted">${log.first - 1} earlier lines are in the download.</p>` : ''}
      ${log.total === 0 && !streaming ? html`<p class="muted">${log.type === 'build' ? 'No build log.' : 'Nothing logged by the app yet.'}</p>` : ''}
      <ol
        class="log"
        id="log"
        start="${log.first}"
        tabindex="0"
        aria-label="${log.type} log"
        ${streaming ? raw(` data-stream="${path}/log/stream?after=${lastId}"`) : ''}
      >
        ${log.lines.map((l) => html`<li>${raw(ansiToHtml(l.line))}</li>`)}
      </ol>
      ${streaming ? html`<p class="muted" id="log-state" role="status">Following the build…</p>` : ''}`;
}
