import type { Deployment } from '../../../api/schemas/deployments.ts';
import type { Organization } from '../../../api/schemas/organizations.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html } from '../html.ts';
import { age, layout, notice, originBadge, statusBadge, type View } from '../layout.ts';

export interface OrgProjects {
  org: Organization;
  projects: { project: Project; latest: Deployment | null }[];
  total: number;
}

const firstLine = (s: string | null | undefined) => (s ? s.split('\n', 1)[0]!.slice(0, 80) : '');

/** A project's card: where it comes from, its production URL, and its newest deployment. */
function card(view: View, { project: p, latest: d }: OrgProjects['projects'][number], now: Date) {
  const { base } = view;
  return html`<li class="card">
    <a class="title" href="${base}/projects/${p.id}">${p.name}</a>
    <span class="muted">${p.repositoryUrl ?? 'uploaded files'} · ${p.branch}</span>
    ${p.deploymentUrl ? html`<a href="${p.deploymentUrl}">${p.deploymentUrl}</a>` : html`<span class="muted">no production deployment yet</span>`}
    ${
      d
        ? html`<span class="latest" data-latest="${d.id}"
            ><span class="sr-only">Newest deployment:</span> ${statusBadge(d.status)}${originBadge(d)}
            <a href="${base}/deployments/${d.id}">${d.target}</a> of ${d.branch}
            ${d.commitHash ? html`<code>${d.commitHash.slice(0, 7)}</code>` : ''}
            ${firstLine(d.commitMessage ?? d.message)} · ${age(d.createdAt, now)}</span
          >`
        : html`<span class="muted">no deployments yet · created ${age(p.createdAt, now)}</span>`
    }
    ${p.status !== 'active' ? html`<span class="muted">${p.status}</span>` : ''}
  </li>`;
}

/** The signed-in user's organizations, each with its projects and their newest deployments. */
export function homePage(view: View, orgs: OrgProjects[], now: Date, message?: string) {
  const { base } = view;
  const canCreate = orgs.some(({ org }) => roleAtLeast(org.role, 'developer'));
  return layout(view, {
    title: 'Projects',
    body: html`<div class="heading">
        <h1>Projects</h1>
        ${canCreate ? html`<a class="button primary" href="${base}/new">New project</a>` : ''}
      </div>
      ${notice(message)}
      ${
        orgs.length === 0
          ? html`<p>
              You are not a member of any organization yet. Ask an admin of one to invite you, or create one
              with <code>POST /v1/organizations</code>.
            </p>`
          : orgs.map(
              ({ org, projects, total }) =>
                html`<section class="org">
                  <h2>
                    <a href="${base}/orgs/${org.name}">${org.displayName}</a>
                    <span class="muted">${org.name} · ${org.plan} · you are ${org.role}</span>
                  </h2>
                  ${
                    projects.length === 0
                      ? html`<p class="muted">
                          No projects yet:
                          ${roleAtLeast(org.role, 'developer') ? html`<a href="${base}/new?org=${org.name}">make one here</a>, or` : ''}
                          <code
                            >npx slipway projects create my-site --repo &lt;repository URL&gt; --org
                            ${org.name}</code
                          >
                        </p>`
                      : html`<ul class="cards">
                            ${projects.map((p) => card(view, p, now))}
                          </ul>
                          ${total > projects.length ? html`<p><a href="${base}/orgs/${org.name}">All ${total} projects</a></p>` : ''}`
                  }
                </section>`,
            )
      }`,
  });
}
