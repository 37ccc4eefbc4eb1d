import type { Deployment, ListDeploymentsQuery } from '../../../api/schemas/deployments.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html } from '../html.ts';
import { age, errorBox, originBadge, statusBadge, type View } from '../layout.ts';
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
  /** A notice of what was just done. */
  message?: string | undefined;
  /** The Deploy form as typed and the API's refusal of it, when it was refused. */
  deploy?: { error: string; typed: Record<string, string> } | undefined;
}

/**
 * Start a deployment, as Vercel's "Create Deployment" and Netlify's "Trigger deploy": a branch
 * (the production branch by default) or an exact commit, with or without the build cache. A
 * project without a repository deploys uploaded files: the page says how, with the CLI.
 */
function deployForm(view: View, data: ProjectPageData) {
  const { base, session } = view;
  const { project } = data;
  if (!roleAtLeast(data.role, 'developer') || project.status !== 'active') return '';
  if (!project.repositoryUrl) {
    return html`<p class="deploy-upload">
      This project deploys uploaded files. From a folder on your machine:
      <code>npx slipway deploy &lt;folder&gt; --project ${project.name} --org ${data.orgName} --prod</code>
    </p>`;
  }
  const typed = data.deploy?.typed ?? {};
  const sent = data.deploy !== undefined;
  return html`<details class="deploy" ${sent ? html` open` : ''}>
    <summary class="button primary">Deploy</summary>
    ${errorBox(data.deploy?.error)}
    <form
      method="post"
      action="${base}/projects/${project.id}/deployments"
      class="filters"
      aria-label="Deploy"
    >
      <input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />
      <label
        >Branch <input name="branch" value="${typed.branch ?? project.branch}" size="16" required
      /></label>
      <label
        >Commit (optional)
        <input name="commitHash" value="${typed.commitHash ?? ''}" size="12" placeholder="head of the branch"
      /></label>
      <label
        >Target
        <select name="target">
          ${(
            [
              ['', `by branch (production for ${project.branch})`],
              ['production', 'production'],
              ['preview', 'preview'],
            ] as const
          ).map(
            ([v, label]) =>
              html`<option value="${v}" ${(typed.target ?? '') === v ? html` selected` : ''}>
                ${label}
              </option>`,
          )}
        </select></label
      >
      <label class="check"
        ><input type="checkbox" name="cache" ${!sent || typed.cache === 'on' ? html` checked` : ''} /> Use the
        build cache</label
      >
      <button type="submit" class="primary">Deploy now</button>
    </form>
  </details>`;
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
        <td data-label="Status">
          ${statusBadge(d.status)}${d.id === project.productionDeploymentId ? html` <span class="badge prod">production</span>` : ''}${originBadge(d)}
        </td>
        <td data-label="Deployment"><a href="${base}/deployments/${d.id}">${d.id}</a></td>
        <td data-label="Target">${d.target}</td>
        <td data-label="Branch">
          ${d.branchUrl ? html`<a href="${d.branchUrl}" title="The newest live preview of ${d.branch}">${d.branch}</a>` : d.branch}
        </td>
        <td data-label="Commit">
          ${d.commitHash ? html`<code>${d.commitHash.slice(0, 7)}</code> ${firstLine(d.commitMessage ?? d.message)}` : html`<span class="muted">${d.message ?? '—'}</span>`}
        </td>
        <td data-label="Author">${d.author ?? html`<span class="muted">—</span>`}</td>
        <td data-label="Created">${age(d.createdAt, now)}</td>
      </tr>`,
  )}`;
}

const firstLine = (s: string | null) => (s ? s.split('\n', 1)[0]!.slice(0, 120) : '');

/** A project's Deployments tab: what the project is, the Deploy form, its deployments (filtered, paged, refreshed live). */
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
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return projectShell(
    view,
    data,
    'deployments',
    html`${projectFacts(base, data)}
      ${deployForm(view, data)}
      <h2 id="deployments">Deployments</h2>
      ${filterForm(path, typed)}
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
    data.message,
  );
}

/** The project: its repository and branch, production, framework, status, the caller's role. */
function projectFacts(base: string, data: ProjectPageData) {
  const { project } = data;
  // prettier-ignore
  return html`<dl class="facts">
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
      </dl>`;
}

/** Filter the deployments by status, target, branch or commit (as typed, kept when refused). */
function filterForm(path: string, typed: Record<string, string>) {
  // prettier-ignore
  return html`<form method="get" action="${path}" class="filters" aria-label="Filter deployments">
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
      </form>`;
}
