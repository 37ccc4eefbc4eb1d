import type { Organization } from '../../../api/schemas/organizations.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { html } from '../html.ts';
import { age, layout, type View } from '../layout.ts';

/** The signed-in user's organizations, each with its projects. */
export function homePage(
  view: View,
  orgs: { org: Organization; projects: Project[]; total: number }[],
  now: Date,
) {
  const { base } = view;
  return layout(view, {
    title: 'Projects',
    body: html`<h1>Projects</h1>
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
                          <code
                            >npx slipway projects create my-site --repo &lt;repository URL&gt; --org
                            ${org.name}</code
                          >
                        </p>`
                      : html`<ul class="cards">
                            ${projects.map(
                              (p) =>
                                html`<li class="card">
                                  <a class="title" href="${base}/projects/${p.id}">${p.name}</a>
                                  <span class="muted"
                                    >${p.repositoryUrl ?? 'uploaded files'} · ${p.branch}</span
                                  >
                                  ${p.deploymentUrl ? html`<a href="${p.deploymentUrl}">${p.deploymentUrl}</a>` : html`<span class="muted">no production deployment yet</span>`}
                                  <span class="muted"
                                    >created
                                    ${age(p.createdAt, now)}${p.status !== 'active' ? ` · ${p.status}` : ''}</span
                                  >
                                </li>`,
                            )}
                          </ul>
                          ${total > projects.length ? html`<p><a href="${base}/orgs/${org.name}">All ${total} projects</a></p>` : ''}`
                  }
                </section>`,
            )
      }`,
  });
}
