import type { Member, Organization } from '../../../api/schemas/organizations.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { html } from '../html.ts';
import { age, layout, type View } from '../layout.ts';
import { pager } from './pager.ts';

export function organizationPage(
  view: View,
  data: {
    org: Organization;
    projects: { items: Project[]; total: number; page: number; limit: number };
    members: Member[];
    now: Date;
  },
) {
  const { base } = view;
  const { org, projects, members, now } = data;
  return layout(view, {
    title: org.displayName,
    crumbs: [{ label: 'Projects', href: `${base}/` }, { label: org.displayName }],
    body: html`<h1>${org.displayName} <span class="muted">${org.name}</span></h1>
      <p class="muted">Plan ${org.plan} · ${org.memberCount} members · you are ${org.role}</p>
      <h2>Projects</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Project</th>
            <th scope="col">Repository</th>
            <th scope="col">Production</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          ${projects.items.map(
            (p) =>
              html`<tr>
                <td><a href="${base}/projects/${p.id}">${p.name}</a></td>
                <td>${p.repositoryUrl} <span class="muted">${p.branch}</span></td>
                <td>
                  ${p.deploymentUrl ? html`<a href="${p.deploymentUrl}">${p.deploymentUrl}</a>` : html`<span class="muted">none yet</span>`}
                </td>
                <td>${age(p.createdAt, now)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${pager(`${base}/orgs/${org.name}`, new URLSearchParams(), projects)}
      <h2>Members</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">E-mail</th>
            <th scope="col">Role</th>
            <th scope="col">Status</th>
            <th scope="col">Joined</th>
          </tr>
        </thead>
        <tbody>
          ${members.map(
            (m) =>
              html`<tr>
                <td>${m.email}</td>
                <td>${m.role}</td>
                <td>${m.status}</td>
                <td>${age(m.joinedAt, now)}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
  });
}
