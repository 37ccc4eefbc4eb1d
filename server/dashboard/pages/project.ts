import type { Deployment, ListDeploymentsQuery } from '../../../api/schemas/deployments.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { html } from '../html.ts';
import { age, errorBox, statusBadge, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';
import { pager } from './pager.ts';

const STATUSES = ['queued', 'building', 'deploying', 'live', 'failed'] as const;
const FINAL = new Set(['live', 'failed']);

export interface ProjectPageData extends ProjectContext {
  deployments: { items: Deployment[]; next: string | null };
  query: ListDeploymentsQuery;
  /** The filter as typed, kept when it was refused. */
  typed: Record<string, string>;
  error?: string | undefined;
  now: Date;
}

/** The rows of the deployments table; also sent alone to refresh the table while statuses change. */
export function deploymentRows(view: View, project: Project, items: Deployment[], now: Date) {
  const { base } = view;
  if (items.length === 0) {
    return html`<tr>
      <td colspan="7" class="muted">No deployments match.</td>
    </tr>`;
  }
  return html`${items.map(
    (d) =>
      html`<tr data-id="${d.id}" data-final="${FINAL.has(d.status) ? '1' : '0'}">
        <td>
          ${statusBadge(d.status)}${d.id === project.productionDeploymentId ? html` <span class="badge prod">production</span>` : ''}
        </td>
        <td><a href="${base}/deployments/${d.id}">${d.id}</a></td>
        <td>${d.target}</td>
        <td>
          ${d.branchUrl ? html`<a href="${d.branchUrl}" title="The newest live preview of ${d.branch}">${d.branch}</a>` : d.branch}
        </td>
        <td>
          ${d.commitHash ? html`<code>${d.commitHash.slice(0, 7)}</code> ${firstLine(d.commitMessage ?? d.message)}` : html`<span class="muted">${d.message ?? '—'}</span>`}
        </td>
        <td>${d.author ?? html`<span class="muted">—</span>`}</td>
        <td>${age(d.createdAt, now)}</td>
      </tr>`,
  )}`;
}

const firstLine = (s: string | null) => (s ? s.split('\n', 1)[0]!.slice(0, 120) : '');

export function projectPage(view: View, data: ProjectPageData) {
  const { base } = view;
  const { project, deployments, query, typed, now } = data;
  const path = `${base}/projects/${project.id}`;
  const filters = new URLSearchParams();
  for (const [k, v] of Object.entries(typed)) if (v && k !== 'cursor') filters.set(k, v);
  const live = deployments.items.some((d) => !FINAL.has(d.status)) ? 'busy' : 'idle';
  const rows = new URLSearchParams(filters);
  if (query.cursor) rows.set('cursor', query.cursor);
  const rowsUrl = `${path}/rows?${rows.toString()}`;
  return projectShell(
    view,
    data,
    'deployments',
    html`<dl class="facts">
        <dt>Repository</dt>
        <dd>
          ${project.repositoryUrl ?? 'none (deploys uploaded files)'}
          <span class="muted">branch ${project.branch}</span>
        </dd>
        <dt>Production</dt>
        <dd>
          ${
            project.deploymentUrl
              ? html`<a href="${project.deploymentUrl}">${project.deploymentUrl}</a> ·
                  <a href="${base}/deployments/${project.productionDeploymentId}"
                    >${project.productionDeploymentId}</a
                  >`
              : html`<span class="muted">no production deployment yet</span>`
          }
        </dd>
        <dt>Framework</dt>
        <dd>
          ${
            project.frameworkSetting
              ? project.frameworkSetting
              : html`${project.framework ?? 'none yet'} <span class="muted">(detected on every build)</span>`
          }
        </dd>
        <dt>Status</dt>
        <dd>${project.status}</dd>
        <dt>Your role</dt>
        <dd>${data.role}</dd>
      </dl>
      <h2 id="deployments">Deployments</h2>
      <form method="get" action="${path}" class="filters" aria-label="Filter deployments">
        <label
          >Status
          <select name="status">
            <option value="">any</option>
            ${STATUSES.map(
              (s) => html`<option value="${s}" ${typed.status === s ? html` selected` : ''}>${s}</option>`,
            )}
          </select></label
        >
        <label
          >Target
          <select name="target">
            <option value="">any</option>
            ${(['production', 'preview'] as const).map(
              (t) => html`<option value="${t}" ${typed.target === t ? html` selected` : ''}>${t}</option>`,
            )}
          </select></label
        >
        <label>Branch <input name="branch" value="${typed.branch ?? ''}" size="16" /></label>
        <label>Commit <input name="commitHash" value="${typed.commitHash ?? ''}" size="10" /></label>
        <button type="submit">Filter</button>
      </form>
      ${errorBox(data.error)}
      <table class="deployments">
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Deployment</th>
            <th scope="col">Target</th>
            <th scope="col">Branch</th>
            <th scope="col">Commit</th>
            <th scope="col">Author</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody data-live-rows="${rowsUrl}" data-live="${live}" aria-live="polite">
          ${deploymentRows(view, project, deployments.items, now)}
        </tbody>
      </table>
      ${pager(path, filters, { cursor: query.cursor, next: deployments.next })}`,
  );
}
